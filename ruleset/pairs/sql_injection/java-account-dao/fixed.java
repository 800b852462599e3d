public Account findAccount(Connection conn, String iban) throws SQLException {
    PreparedStatement stmt = conn.prepareStatement("SELECT id, balance FROM accounts WHERE iban = ?");
    stmt.setString(1, iban);
    ResultSet rs = stmt.executeQuery();
    return rs.next() ? new Account(rs.getLong(1), rs.getBigDecimal(2)) : null;
}
