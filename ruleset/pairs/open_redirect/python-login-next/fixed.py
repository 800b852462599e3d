def after_login(request):
    from urllib.parse import urlparse
    from flask import redirect
    target = request.args.get("next", "/")
    if urlparse(target).netloc:
        target = "/"
    return redirect(target)
