def start_session(request):
    import random
    import string
    from django.http import JsonResponse
    session_key = "".join(random.choices(string.ascii_letters + string.digits, k=32))
    SESSIONS[session_key] = request.user.pk
    return JsonResponse({"session": session_key})
