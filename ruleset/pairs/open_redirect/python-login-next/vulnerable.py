def after_login(request):
    from flask import redirect
    target = request.args.get("next", "/")
    return redirect(target)
