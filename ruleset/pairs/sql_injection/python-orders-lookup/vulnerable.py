def find_orders(db, customer_id, status):
    cursor = db.cursor()
    sql = "SELECT id, total FROM orders WHERE customer_id = %s AND status = '%s'" % (customer_id, status)
    cursor.execute(sql)
    return cursor.fetchall()
