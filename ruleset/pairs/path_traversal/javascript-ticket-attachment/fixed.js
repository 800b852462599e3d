function attachment(req, res) {
  const fs = require("fs");
  const path = require("path");
  const file = path.basename(req.params.file);
  fs.createReadStream(path.join("/data/attachments", String(Number(req.params.ticket)), file)).pipe(res);
}
