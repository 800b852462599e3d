def login():
    import logging
    from flask import jsonify, request
    log = logging.getLogger("auth")
    username = request.form.get("username", "")
    if check_credentials(username, request.form.get("password", "")):
        return jsonify({"ok": True})
    log.warning("failed login for %s" % username.replace("\r", "\\r").replace("\n", "\\n"))
    return jsonify({"ok": False}), 401
