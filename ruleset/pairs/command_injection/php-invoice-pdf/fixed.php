<?php
function invoice_pdf($html_file, $number) {
    $out = "/tmp/invoice-" . intval($number) . ".pdf";
    shell_exec("wkhtmltopdf " . escapeshellarg($html_file) . " " . escapeshellarg($out));
    return $out;
}
