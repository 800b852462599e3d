function searchPage(req, res) {
  const escapeHtml = require("escape-html");
  const q = escapeHtml(req.query.q || "");
  res.send("<html><body><p>Results for: " + q + "</p></body></html>");
}
