def grades_for(student_id, course):
    from django.db import connection
    with connection.cursor() as c:
        c.execute("SELECT assignment, score FROM grades WHERE student = %s AND course = '%s'" % (student_id, course))
        return c.fetchall()
