def hash_password(password):
    import hashlib
    import os
    salt = os.urandom(16)
    return salt.hex() + hashlib.pbkdf2_hmac("sha256", password.encode(), salt, 200_000).hex()
