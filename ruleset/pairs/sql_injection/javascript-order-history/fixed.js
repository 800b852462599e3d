function orderHistory(pool, req, res) {
  const sql = "SELECT id, placed_at FROM orders WHERE email = $1 ORDER BY placed_at DESC";
  pool.query(sql, [req.query.email], (err, result) => {
    if (err) return res.status(500).end();
    res.json(result.rows);
  });
}
