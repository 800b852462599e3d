def start_quiz():
    import random
    import secrets
    from flask import jsonify, session
    questions = load_questions()
    quiz_token = secrets.token_hex(8)
    random.shuffle(questions)
    session["quiz"] = quiz_token
    QUIZZES[quiz_token] = questions
    return jsonify({"first": questions[0]})
