<?php
function render_poll_title($poll) {
    echo "<h3 class='poll-title'>" . htmlspecialchars($poll->title, ENT_QUOTES, 'UTF-8') . "</h3>";
}
