def start_session(request):
    import random
    import secrets
    from django.http import JsonResponse
    session_key = secrets.token_urlsafe(32)
    SESSIONS[session_key] = request.user.pk
    tip = random.choice(TIPS)
    return JsonResponse({"session": session_key, "tip": tip})
