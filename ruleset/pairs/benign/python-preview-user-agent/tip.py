def fetch_preview(url):
    from urllib.parse import urlparse
    import requests
    parsed = urlparse(url)
    if parsed.scheme != "https" or parsed.hostname in (None, "localhost"):
        raise ValueError("url not allowed")
    headers = {"User-Agent": "linkwise-preview/2.1"}
    response = requests.get(url, timeout=5, allow_redirects=False, headers=headers)
    return response.text[:4000]
