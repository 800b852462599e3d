def start_quiz():
    import secrets
    from flask import jsonify, session
    questions = load_questions()
    quiz_token = secrets.token_hex(8)
    session["quiz"] = quiz_token
    QUIZZES[quiz_token] = questions
    return jsonify({"first": questions[0]})
