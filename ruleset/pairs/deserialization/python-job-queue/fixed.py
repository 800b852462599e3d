def next_job(redis_client):
    import json
    raw = redis_client.lpop("jobs")
    if raw is None:
        return None
    return json.loads(raw)
