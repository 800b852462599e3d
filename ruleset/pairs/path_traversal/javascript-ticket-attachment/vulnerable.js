function attachment(req, res) {
  const fs = require("fs");
  fs.createReadStream("/data/attachments/" + req.params.ticket + "/" + req.params.file).pipe(res);
}
