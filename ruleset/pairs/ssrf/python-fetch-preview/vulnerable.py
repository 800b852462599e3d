def fetch_preview(url):
    import requests
    response = requests.get(url, timeout=5)
    return response.text[:2000]
