def search_users(connection, term):
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT username, email FROM auth_user WHERE username LIKE '%{term}%'")
        rows = cursor.fetchall()
    return [{"username": r[0], "email": r[1]} for r in rows]
