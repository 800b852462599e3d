<?php
function render_page() {
    $page = $_GET['page'] ?? 'home';
    include __DIR__ . "/pages/" . $page . ".php";
}
