<?php
function check_login($mysqli, $user, $pass) {
    $result = $mysqli->query("SELECT id FROM users WHERE login = '" . $user . "' AND pass = '" . md5($pass) . "'");
    return $result && $result->num_rows === 1;
}
