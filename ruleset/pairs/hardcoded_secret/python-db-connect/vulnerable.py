def connect():
    import psycopg2
    return psycopg2.connect(host="db.internal", user="jobs", password="Winter2024!jobs", dbname="jobs")
