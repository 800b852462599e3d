public void exportStatement(String accountId, String format) throws IOException {
    new ProcessBuilder("/opt/reports/export.sh", accountId, format).start();
}
