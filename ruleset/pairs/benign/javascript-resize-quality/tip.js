function resizeImage(file, size, done) {
  const { execFile } = require("child_process");
  const args = [file, "-resize", String(parseInt(size, 10)), "-quality", "85", "out.png"];
  execFile("convert", args, (err) => done(err));
}
