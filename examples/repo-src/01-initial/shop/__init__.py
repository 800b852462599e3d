"""The shop web application."""

from flask import Flask


def create_app(config: dict | None = None) -> Flask:
    app = Flask(__name__)
    app.config.from_mapping(
        SECRET_KEY="change-me",
        DATABASE="shop.db",
        UPLOAD_DIR="var/uploads",
    )
    if config:
        app.config.update(config)

    from . import app as routes

    app.register_blueprint(routes.bp)
    return app
