<?php
function fetch_logo($url) {
    return file_get_contents($url);
}
