function resizeImage(file, size, done) {
  const { execFile } = require("child_process");
  execFile("convert", [file, "-resize", String(parseInt(size, 10)), "out.png"], (err) => done(err));
}
