<?php
function rooms_for_date($pdo, $date) {
    $stmt = $pdo->prepare("SELECT number, rate, beds FROM rooms WHERE free_on = ? ORDER BY rate");
    $stmt->execute([$date]);
    return $stmt->fetchAll(PDO::FETCH_ASSOC);
}
