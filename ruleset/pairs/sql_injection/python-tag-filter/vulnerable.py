def products_by_tag(session, tag):
    from sqlalchemy import text
    stmt = text("SELECT sku, name FROM products WHERE tag = '" + tag + "'")
    return session.execute(stmt).all()
