def admin_login():
    from flask import jsonify, request, session
    user = request.form.get("user")
    password = request.form.get("password")
    if user == "admin" and password == "Quizmaster2024!":
        session["admin"] = True
        return jsonify({"ok": True})
    return jsonify({"ok": False}), 401
