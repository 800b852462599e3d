def hash_password(password):
    import hashlib
    return hashlib.md5(password.encode()).hexdigest()
