<?php
function calc_shortcode($atts) {
    return is_numeric($atts['expr']) ? floatval($atts['expr']) : 0;
}
