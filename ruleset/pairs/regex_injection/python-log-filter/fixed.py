def filter_lines(request):
    import re
    from django.http import JsonResponse
    patterns = {"errors": r"\bERROR\b", "warnings": r"\bWARN(ING)?\b", "all": r".*"}
    pattern = re.compile(patterns.get(request.GET.get("filter", "all"), r".*"))
    lines = [line for line in read_log() if pattern.search(line)]
    return JsonResponse({"lines": lines[:500]})
