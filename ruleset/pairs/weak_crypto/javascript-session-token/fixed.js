function newSessionId() {
  const crypto = require("crypto");
  return crypto.randomBytes(24).toString("base64url");
}
