def search_page(request):
    from django.http import HttpResponse
    from django.utils.html import escape
    term = escape(request.GET.get("q", ""))
    return HttpResponse("<p>No results for " + term + "</p>")
