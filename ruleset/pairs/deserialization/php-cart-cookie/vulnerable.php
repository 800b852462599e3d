<?php
function load_cart() {
    return unserialize(base64_decode($_COOKIE['cart'] ?? ''));
}
