<?php
function invoice_pdf($html_file, $number) {
    $out = "/tmp/invoice-" . $number . ".pdf";
    shell_exec("wkhtmltopdf " . $html_file . " " . $out);
    return $out;
}
