function searchPage(req, res) {
  const q = req.query.q || "";
  res.send("<html><body><p>Results for: " + q + "</p></body></html>");
}
