<?php
function render_page() {
    $page = $_GET['page'] ?? 'home';
    if (!in_array($page, ['home', 'about', 'pricing'], true)) {
        $page = 'home';
    }
    include __DIR__ . "/pages/" . $page . ".php";
}
