def next_job(redis_client):
    import pickle
    raw = redis_client.lpop("jobs")
    if raw is None:
        return None
    return pickle.loads(raw)
