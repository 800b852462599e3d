function readPrefs(req) {
  const serialize = require("node-serialize");
  return serialize.unserialize(Buffer.from(req.cookies.prefs, "base64").toString());
}
