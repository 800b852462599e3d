async function unfurl(req, res) {
  const axios = require("axios");
  const page = await axios.get(req.body.url, { timeout: 4000 });
  res.json({ title: extractTitle(page.data) });
}
