<?php
function widget_options($raw) {
    return json_decode(stripslashes($raw), true);
}
