async function unfurl(req, res) {
  const axios = require("axios");
  const target = new URL(req.body.url);
  if (target.protocol !== "https:" || isPrivateHost(target.hostname)) return res.status(400).end();
  const page = await axios.get(target.href, { timeout: 4000, maxRedirects: 0 });
  res.json({ title: extractTitle(page.data) });
}
