async function searchTickets(knex, req, res) {
  const rows = await knex.raw("SELECT id, subject FROM tickets WHERE subject LIKE ?", ["%" + req.query.q + "%"]);
  res.json(rows);
}
