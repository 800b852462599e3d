<?php
function render_poll_title($poll) {
    echo "<h3 class='poll-title'>" . $poll->title . "</h3>";
}
