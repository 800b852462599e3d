def send_login_code():
    import random
    from flask import jsonify, request
    email = request.form["email"]
    code = random.randint(100000, 999999)
    store_login_code(email, code)
    send_mail(email, f"Your sign-in code is {code}")
    return jsonify({"sent": True})
