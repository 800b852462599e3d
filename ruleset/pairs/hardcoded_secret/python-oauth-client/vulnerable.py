def oauth_session():
    from requests_oauthlib import OAuth2Session
    client_id = "members-portal"
    client_secret = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"
    token_url = "https://auth.example.org/oauth2/token"
    oauth = OAuth2Session(client_id)
    oauth.fetch_token(token_url, client_secret=client_secret)
    return oauth
