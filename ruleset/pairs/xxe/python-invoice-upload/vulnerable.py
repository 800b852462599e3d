def upload_invoice(request):
    from lxml import etree
    from django.http import JsonResponse
    doc = etree.fromstring(request.body)
    total = doc.findtext("total")
    return JsonResponse({"total": total})
