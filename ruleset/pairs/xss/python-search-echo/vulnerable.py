def search_page(request):
    from django.http import HttpResponse
    term = request.GET.get("q", "")
    return HttpResponse("<p>No results for " + term + "</p>")
