"""Uploaded files. Names from requests are confined to the upload directory."""

import os

from flask import current_app
from werkzeug.exceptions import NotFound


def upload_path(name: str) -> str:
    root = os.path.realpath(current_app.config["UPLOAD_DIR"])
    path = os.path.realpath(os.path.join(root, name))
    if os.path.commonpath([root, path]) != root:
        raise NotFound()
    return path
