public Account findAccount(Connection conn, String iban) throws SQLException {
    Statement stmt = conn.createStatement();
    ResultSet rs = stmt.executeQuery("SELECT id, balance FROM accounts WHERE iban = '" + iban + "'");
    return rs.next() ? new Account(rs.getLong(1), rs.getBigDecimal(2)) : null;
}
