function loadLocale(lang) {
  const fs = require("fs");
  return JSON.parse(fs.readFileSync("./locales/" + lang + ".json", "utf8"));
}
