def filter_lines(request):
    import re
    from django.http import JsonResponse
    pattern = re.compile(request.GET.get("filter", ".*"))
    lines = [line for line in read_log() if pattern.search(line)]
    return JsonResponse({"lines": lines[:500]})
