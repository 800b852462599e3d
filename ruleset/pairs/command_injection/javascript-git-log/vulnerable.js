function branchLog(req, res) {
  const { execSync } = require("child_process");
  const out = execSync(`git log --oneline -n 20 ${req.query.branch}`);
  res.type("text/plain").send(out);
}
