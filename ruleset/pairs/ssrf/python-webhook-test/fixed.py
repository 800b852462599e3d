def test_webhook(target, payload):
    from urllib.parse import urlparse
    from urllib.request import Request, urlopen
    if urlparse(target).hostname not in ALLOWED_WEBHOOK_HOSTS:
        raise ValueError("webhook host not allowed")
    request = Request(target, data=payload.encode(), method="POST")
    with urlopen(request, timeout=3) as reply:
        return reply.status
