<?php
function fetch_logo($url) {
    $host = parse_url($url, PHP_URL_HOST);
    if (parse_url($url, PHP_URL_SCHEME) !== 'https' || !in_array($host, LOGO_HOSTS, true)) {
        return false;
    }
    return file_get_contents($url);
}
