def logout_view(request):
    from django.http import HttpResponseRedirect
    request.session.flush()
    return HttpResponseRedirect(request.GET.get("return_to", "/"))
