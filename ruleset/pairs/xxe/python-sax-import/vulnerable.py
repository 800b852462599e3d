def import_contacts():
    import io
    import xml.sax
    from xml.sax.handler import feature_external_ges
    from flask import jsonify, request
    handler = ContactHandler()
    parser = xml.sax.make_parser()
    parser.setFeature(feature_external_ges, True)
    parser.setContentHandler(handler)
    parser.parse(io.BytesIO(request.get_data()))
    return jsonify({"imported": len(handler.contacts)})
