function finishLogin(req, res) {
  req.session.user = req.user.id;
  res.redirect(req.query.returnTo || "/");
}
