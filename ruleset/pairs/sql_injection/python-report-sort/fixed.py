ALLOWED_ORDER = {"region": "region", "total": "total DESC"}


def monthly_report(conn, month, order_by):
    column = ALLOWED_ORDER.get(order_by, "region")
    query = "SELECT region, SUM(amount) AS total FROM sales WHERE month = ? GROUP BY region ORDER BY " + column
    return conn.execute(query, (month,)).fetchall()
