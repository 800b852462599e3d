<?php
function check_login($mysqli, $user, $pass) {
    $stmt = $mysqli->prepare("SELECT id, pass FROM users WHERE login = ?");
    $stmt->bind_param("s", $user);
    $stmt->execute();
    $row = $stmt->get_result()->fetch_assoc();
    return $row && password_verify($pass, $row["pass"]);
}
