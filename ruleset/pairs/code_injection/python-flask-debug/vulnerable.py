def main():
    from flask import Flask
    app = create_app(Flask(__name__))
    app.run(host="0.0.0.0", port=8080, debug=True)
