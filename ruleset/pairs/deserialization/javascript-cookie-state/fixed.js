function readPrefs(req) {
  return JSON.parse(Buffer.from(req.cookies.prefs, "base64").toString());
}
