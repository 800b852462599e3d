<?php
function go_back() {
    header("Location: " . $_GET['back']);
    exit;
}
