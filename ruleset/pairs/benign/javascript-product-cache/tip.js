async function getProduct(db, req, res) {
  const id = req.params.id;
  const rows = await db.query("SELECT * FROM products WHERE id = ? AND archived = 0", [id]);
  res.set("Cache-Control", "max-age=60");
  res.json(rows[0] || null);
}
