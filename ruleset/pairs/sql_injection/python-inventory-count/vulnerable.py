def count_stock(conn, warehouse, sku):
    cur = conn.cursor()
    cur.execute("SELECT qty FROM stock WHERE warehouse = '" + warehouse + "' AND sku = '" + sku + "'")
    row = cur.fetchone()
    return row[0] if row else 0
