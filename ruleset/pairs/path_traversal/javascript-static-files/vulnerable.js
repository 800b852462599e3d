function serveArtifact(req, res) {
  const path = require("path");
  const file = path.join(__dirname, "artifacts", req.params.name);
  res.sendFile(file);
}
