def test_webhook(target, payload):
    from urllib.request import Request, urlopen
    request = Request(target, data=payload.encode(), method="POST")
    with urlopen(request, timeout=3) as reply:
        return reply.status
