<?php
function rooms_for_date($pdo, $date) {
    $sql = "SELECT number, rate FROM rooms WHERE free_on = '$date'";
    return $pdo->query($sql)->fetchAll();
}
