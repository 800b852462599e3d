def start_session(request):
    import secrets
    from django.http import JsonResponse
    session_key = secrets.token_urlsafe(32)
    SESSIONS[session_key] = request.user.pk
    return JsonResponse({"session": session_key})
