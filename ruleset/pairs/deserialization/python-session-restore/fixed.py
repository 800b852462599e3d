def restore_session(cookie_value):
    import base64
    import json
    return json.loads(base64.b64decode(cookie_value))
