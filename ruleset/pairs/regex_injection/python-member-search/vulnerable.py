def member_search():
    import re
    from flask import jsonify, request
    needle = request.args.get("q", "")
    found = [m for m in load_members() if re.search(needle, m["name"], re.IGNORECASE)]
    return jsonify(found)
