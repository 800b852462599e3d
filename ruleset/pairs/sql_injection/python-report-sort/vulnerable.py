def monthly_report(conn, month, order_by):
    query = "SELECT region, SUM(amount) AS total FROM sales WHERE month = ? GROUP BY region ORDER BY " + order_by
    return conn.execute(query, (month,)).fetchall()
