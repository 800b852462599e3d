async function proxyAvatar(req, res) {
  const src = new URL(req.query.src);
  if (!AVATAR_HOSTS.includes(src.hostname)) return res.status(400).end();
  const response = await fetch(src.href);
  res.type(response.headers.get("content-type"));
  res.send(Buffer.from(await response.arrayBuffer()));
}
