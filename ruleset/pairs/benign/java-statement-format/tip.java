public void exportStatement(String accountId, String format) throws IOException {
    String chosen = format == null ? "pdf" : format;
    new ProcessBuilder("/opt/reports/export.sh", accountId, chosen).inheritIO().start();
}
