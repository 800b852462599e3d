def start_quiz():
    import random
    from flask import jsonify, session
    questions = load_questions()
    quiz_token = "%x" % random.getrandbits(64)
    random.shuffle(questions)
    session["quiz"] = quiz_token
    QUIZZES[quiz_token] = questions
    return jsonify({"first": questions[0]})
