def send_login_code():
    import random
    import secrets
    import time
    from flask import jsonify, request
    email = request.form["email"]
    code = secrets.randbelow(900000) + 100000
    store_login_code(email, code)
    time.sleep(random.uniform(0.05, 0.2))
    send_mail(email, f"Your sign-in code is {code}")
    return jsonify({"sent": True})
