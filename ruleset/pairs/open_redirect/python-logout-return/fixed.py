def logout_view(request):
    from django.http import HttpResponseRedirect
    from django.utils.http import url_has_allowed_host_and_scheme
    request.session.flush()
    target = request.GET.get("return_to", "/")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        target = "/"
    return HttpResponseRedirect(target)
