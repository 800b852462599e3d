<?php
function poll_results($poll_id) {
    global $wpdb;
    return $wpdb->get_results("SELECT answer, COUNT(*) AS votes FROM {$wpdb->prefix}poll_votes WHERE poll = $poll_id GROUP BY answer");
}
