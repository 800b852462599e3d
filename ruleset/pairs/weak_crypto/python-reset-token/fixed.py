def reset_token(user_id):
    import secrets
    return str(user_id) + "-" + secrets.token_urlsafe(24)
