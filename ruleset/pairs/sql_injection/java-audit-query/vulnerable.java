public List<Map<String, Object>> auditEntries(JdbcTemplate jdbc, String user) {
    return jdbc.queryForList("SELECT action, at FROM audit WHERE username = '" + user + "' ORDER BY at DESC");
}
