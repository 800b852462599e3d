def report_page():
    import logging
    from flask import jsonify, request
    page = request.args.get("page", "1")
    logging.info(f"report page {page} requested")
    return jsonify(load_report(int(page)))
