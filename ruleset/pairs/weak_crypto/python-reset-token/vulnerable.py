def reset_token(user_id):
    import random
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    return str(user_id) + "-" + "".join(random.choice(alphabet) for _ in range(24))
