function branchLog(req, res) {
  const { execFileSync } = require("child_process");
  const out = execFileSync("git", ["log", "--oneline", "-n", "20", "--end-of-options", req.query.branch]);
  res.type("text/plain").send(out);
}
