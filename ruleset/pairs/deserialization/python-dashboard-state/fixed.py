def load_dashboard(blob):
    import json
    return json.loads(blob)
