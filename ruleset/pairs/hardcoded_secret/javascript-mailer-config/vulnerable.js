function createTransport() {
  const nodemailer = require("nodemailer");
  return nodemailer.createTransport({ host: "smtp.example.net", auth: { user: "alerts", pass: "hunter2-Prod-2023" } });
}
