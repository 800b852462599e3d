function createTransport() {
  const nodemailer = require("nodemailer");
  return nodemailer.createTransport({ host: "smtp.example.net", auth: { user: "alerts", pass: process.env.SMTP_PASSWORD } });
}
