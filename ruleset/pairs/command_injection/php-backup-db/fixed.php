<?php
function backup_database($name) {
    $safe = preg_replace('/[^A-Za-z0-9_]/', '', $name);
    system("mysqldump " . escapeshellarg($safe) . " > /backups/" . $safe . ".sql");
}
