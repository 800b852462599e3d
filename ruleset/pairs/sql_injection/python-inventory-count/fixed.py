def count_stock(conn, warehouse, sku):
    cur = conn.cursor()
    cur.execute("SELECT qty FROM stock WHERE warehouse = %s AND sku = %s", (warehouse, sku))
    row = cur.fetchone()
    return row[0] if row else 0
