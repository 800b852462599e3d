<?php
function load_cart() {
    return json_decode(base64_decode($_COOKIE['cart'] ?? ''), true);
}
