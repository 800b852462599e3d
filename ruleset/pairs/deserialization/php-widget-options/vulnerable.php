<?php
function widget_options($raw) {
    return maybe_unserialize(stripslashes($raw));
}
