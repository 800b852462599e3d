<?php
function welcome_banner() {
    $name = htmlspecialchars($_GET['name'] ?? 'guest', ENT_QUOTES, 'UTF-8');
    echo "<div class='banner'>Welcome back, $name</div>";
}
