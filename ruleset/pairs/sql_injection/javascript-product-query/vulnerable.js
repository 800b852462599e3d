async function getProduct(db, req, res) {
  const id = req.params.id;
  const rows = await db.query("SELECT * FROM products WHERE id = " + id);
  res.json(rows[0] || null);
}
