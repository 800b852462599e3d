def send_login_code():
    import secrets
    from flask import jsonify, request
    email = request.form["email"]
    code = secrets.randbelow(900000) + 100000
    store_login_code(email, code)
    send_mail(email, f"Your sign-in code is {code}")
    return jsonify({"sent": True})
