<?php
function go_back() {
    $back = $_GET['back'] ?? '/';
    if (parse_url($back, PHP_URL_HOST) !== null) {
        $back = '/';
    }
    header("Location: " . $back);
    exit;
}
