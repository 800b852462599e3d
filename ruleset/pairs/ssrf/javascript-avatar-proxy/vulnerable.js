async function proxyAvatar(req, res) {
  const response = await fetch(req.query.src);
  res.type(response.headers.get("content-type"));
  res.send(Buffer.from(await response.arrayBuffer()));
}
