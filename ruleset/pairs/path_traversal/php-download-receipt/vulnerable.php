<?php
function download_receipt($file) {
    readfile("/var/receipts/" . $file);
}
