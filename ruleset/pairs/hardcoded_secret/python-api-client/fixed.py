def make_client():
    import os
    import requests
    session = requests.Session()
    session.headers["Authorization"] = "Bearer " + os.environ["PAYMENTS_API_KEY"]
    return session
