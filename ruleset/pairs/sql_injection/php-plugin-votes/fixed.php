<?php
function poll_results($poll_id) {
    global $wpdb;
    return $wpdb->get_results($wpdb->prepare("SELECT answer, COUNT(*) AS votes FROM {$wpdb->prefix}poll_votes WHERE poll = %d GROUP BY answer", $poll_id));
}
