def import_contacts():
    import io
    import defusedxml.sax
    from flask import jsonify, request
    handler = ContactHandler()
    defusedxml.sax.parse(io.BytesIO(request.get_data()), handler)
    return jsonify({"imported": len(handler.contacts)})
