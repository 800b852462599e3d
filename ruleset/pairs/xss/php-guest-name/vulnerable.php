<?php
function welcome_banner() {
    $name = $_GET['name'] ?? 'guest';
    echo "<div class='banner'>Welcome back, $name</div>";
}
