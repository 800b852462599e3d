def restore_session(cookie_value):
    import base64
    import pickle
    return pickle.loads(base64.b64decode(cookie_value))
