function resizeImage(file, size, done) {
  const { exec } = require("child_process");
  exec("convert " + file + " -resize " + size + " out.png", (err) => done(err));
}
