public void exportStatement(String accountId, String format) throws IOException {
    Runtime.getRuntime().exec("/opt/reports/export.sh " + accountId + " " + format);
}
