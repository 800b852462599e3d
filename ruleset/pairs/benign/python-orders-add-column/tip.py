def find_orders(db, customer_id, status):
    cursor = db.cursor()
    sql = "SELECT id, total, placed_at FROM orders WHERE customer_id = %s AND status = %s ORDER BY placed_at"
    cursor.execute(sql, (customer_id, status))
    return cursor.fetchall()
