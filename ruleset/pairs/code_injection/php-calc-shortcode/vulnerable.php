<?php
function calc_shortcode($atts) {
    return eval("return " . $atts['expr'] . ";");
}
