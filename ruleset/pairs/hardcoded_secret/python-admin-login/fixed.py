def admin_login():
    import os
    from werkzeug.security import check_password_hash
    from flask import jsonify, request, session
    user = request.form.get("user")
    password = request.form.get("password", "")
    password_field = "admin_password_hash"
    if user == "admin" and check_password_hash(os.environ[password_field.upper()], password):
        session["admin"] = True
        return jsonify({"ok": True})
    return jsonify({"ok": False}), 401
