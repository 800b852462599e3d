def connect():
    import os
    import psycopg2
    return psycopg2.connect(host="db.internal", user="jobs", password=os.environ["JOBS_DB_PASSWORD"], dbname="jobs")
