def find_orders(db, customer_id, status):
    cursor = db.cursor()
    sql = "SELECT id, total FROM orders WHERE customer_id = %s AND status = %s"
    cursor.execute(sql, (customer_id, status))
    return cursor.fetchall()
