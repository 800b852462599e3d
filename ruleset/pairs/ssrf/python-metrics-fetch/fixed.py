def scrape_target(target_url):
    import httpx
    if target_url not in REGISTERED_TARGETS:
        raise ValueError("unknown scrape target")
    return httpx.get(target_url + "/metrics", timeout=2.0).text
