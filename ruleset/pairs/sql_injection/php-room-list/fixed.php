<?php
function rooms_for_date($pdo, $date) {
    $stmt = $pdo->prepare("SELECT number, rate FROM rooms WHERE free_on = ?");
    $stmt->execute([$date]);
    return $stmt->fetchAll();
}
