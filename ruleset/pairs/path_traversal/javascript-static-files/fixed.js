function serveArtifact(req, res) {
  const path = require("path");
  const root = path.join(__dirname, "artifacts");
  const file = path.resolve(root, req.params.name);
  if (!file.startsWith(root + path.sep)) return res.status(400).end();
  res.sendFile(file);
}
