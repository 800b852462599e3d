def upload_invoice(request):
    from lxml import etree
    from django.http import JsonResponse
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    doc = etree.fromstring(request.body, parser)
    total = doc.findtext("total")
    return JsonResponse({"total": total})
