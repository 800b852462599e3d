def make_client():
    import requests
    session = requests.Session()
    session.headers["Authorization"] = "Bearer sk_live_51HxQ2vKz9w8PqL3nM4rT7yU"
    return session
