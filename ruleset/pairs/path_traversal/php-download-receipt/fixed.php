<?php
function download_receipt($file) {
    readfile("/var/receipts/" . basename($file));
}
