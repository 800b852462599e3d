function finishLogin(req, res) {
  req.session.user = req.user.id;
  const target = req.query.returnTo || "/";
  res.redirect(target.startsWith("/") && !target.startsWith("//") ? target : "/");
}
