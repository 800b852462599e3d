def start_quiz():
    import random
    from flask import jsonify, session
    questions = load_questions()
    quiz_token = "%x" % random.getrandbits(64)
    session["quiz"] = quiz_token
    QUIZZES[quiz_token] = questions
    return jsonify({"first": questions[0]})
