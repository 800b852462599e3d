def oauth_session():
    import os
    from requests_oauthlib import OAuth2Session
    client_id = "members-portal"
    client_secret = os.environ["OAUTH_CLIENT_SECRET"]
    token_url = "https://auth.example.org/oauth2/token"
    oauth = OAuth2Session(client_id)
    oauth.fetch_token(token_url, client_secret=client_secret)
    return oauth
