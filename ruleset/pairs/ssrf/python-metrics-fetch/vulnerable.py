def scrape_target(target_url):
    import httpx
    return httpx.get(target_url + "/metrics", timeout=2.0).text
