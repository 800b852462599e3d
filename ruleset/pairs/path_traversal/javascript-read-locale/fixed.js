function loadLocale(lang) {
  const fs = require("fs");
  if (!/^[a-z]{2}(-[A-Z]{2})?$/.test(lang)) throw new Error("bad locale");
  return JSON.parse(fs.readFileSync("./locales/" + lang + ".json", "utf8"));
}
