<?php
function backup_database($name) {
    system("mysqldump " . $name . " > /backups/" . $name . ".sql");
}
