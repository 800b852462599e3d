# ruff: noqa  (vulnerable on purpose: a fixture the scan tests read)
"""A small Flask shop: each route that handles request data unsafely has a safe twin beside it."""

import ast
import io
import logging
import random
import re
import secrets
import xml.sax
from xml.sax.handler import feature_external_ges
import hashlib
import os
import pickle
import shlex
import sqlite3
import subprocess

import ldap
import requests
import yaml
from ldap.filter import escape_filter_chars
from lxml import etree
from markupsafe import escape
from flask import Flask, abort, jsonify, make_response, redirect, render_template_string, request, url_for
from werkzeug.utils import secure_filename

app = Flask(__name__)
log = logging.getLogger("shop")
UPLOADS = "/srv/shop/uploads"
ALLOWED_NEXT = {"/", "/cart", "/orders"}
PARTNER_FEEDS = {"https://feeds.example.com/prices", "https://feeds.example.com/stock"}


def db():
    return sqlite3.connect("/srv/shop/shop.db")


@app.route("/ping")
def ping():
    host = request.args["host"]
    return subprocess.run(f"ping -c 1 {host}", shell=True, capture_output=True).stdout


@app.route("/ping-safe")
def ping_safe():
    host = request.args["host"]
    return subprocess.run(f"ping -c 1 {shlex.quote(host)}", shell=True, capture_output=True).stdout


@app.route("/users")
def find_user():
    name = request.args.get("name", "")
    return str(db().execute(f"SELECT id, email FROM users WHERE name = '{name}'").fetchall())


@app.route("/users-safe")
def find_user_safe():
    name = request.args.get("name", "")
    return jsonify(db().execute("SELECT id, email FROM users WHERE name = ?", (name,)).fetchall())


@app.route("/download")
def download():
    name = request.args["file"]
    with open(os.path.join(UPLOADS, name), "rb") as fh:
        return fh.read()


@app.route("/download-safe")
def download_safe():
    name = secure_filename(request.args["file"])
    with open(os.path.join(UPLOADS, name), "rb") as fh:
        return fh.read()


@app.route("/cart/restore", methods=["POST"])
def restore_cart():
    return str(pickle.loads(request.get_data()))


@app.route("/cart/restore-safe", methods=["POST"])
def restore_cart_safe():
    return jsonify(request.get_json())


@app.route("/settings", methods=["POST"])
def import_settings():
    return str(yaml.load(request.data, Loader=yaml.Loader))


@app.route("/settings-safe", methods=["POST"])
def import_settings_safe():
    return jsonify(yaml.safe_load(request.data))


@app.route("/hello")
def hello():
    name = request.args.get("name", "")
    return render_template_string("<h1>Hello " + name + "</h1>")


@app.route("/hello-safe")
def hello_safe():
    name = request.args.get("name", "")
    return render_template_string("<h1>Hello {{ name }}</h1>", name=name)


@app.route("/login/next")
def after_login():
    return redirect(request.args["next"])


@app.route("/login/next-safe")
def after_login_safe():
    target = request.args.get("next", "/")
    if target not in ALLOWED_NEXT:
        return redirect(url_for("index"))
    return redirect(target)


@app.route("/feed")
def partner_feed():
    url = request.args["url"]
    return requests.get(url, timeout=5).text


@app.route("/feed-safe")
def partner_feed_safe():
    url = request.args["url"]
    if url not in PARTNER_FEEDS:
        abort(400)
    return requests.get(url, timeout=5).text


@app.route("/calc")
def calc():
    return str(eval(request.args["expr"]))


@app.route("/calc-safe")
def calc_safe():
    return jsonify(ast.literal_eval(request.args["expr"]))


@app.route("/register", methods=["POST"])
def register():
    password = request.form["password"]
    digest = hashlib.md5(password.encode()).hexdigest()
    db().execute("INSERT INTO users (name, password) VALUES (?, ?)", (request.form["name"], digest))
    return "ok"


@app.route("/register-safe", methods=["POST"])
def register_safe():
    password = request.form["password"]
    salt = os.urandom(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, 600_000).hex()
    db().execute(
        "INSERT INTO users (name, password, salt) VALUES (?, ?, ?)", (request.form["name"], digest, salt)
    )
    return "ok"


@app.route("/search")
def search():
    term = request.args.get("q", "")
    return make_response("<p>Results for " + term + "</p>")


@app.route("/search-safe")
def search_safe():
    term = request.args.get("q", "")
    return make_response("<p>Results for " + str(escape(term)) + "</p>")


@app.route("/catalog/import", methods=["POST"])
def import_catalog():
    handler = CatalogHandler()
    parser = xml.sax.make_parser()
    parser.setFeature(feature_external_ges, True)
    parser.setContentHandler(handler)
    parser.parse(io.BytesIO(request.get_data()))
    return jsonify({"items": handler.count})


@app.route("/catalog/import-safe", methods=["POST"])
def import_catalog_safe():
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    root = etree.fromstring(request.get_data(), parser)
    return jsonify({"items": len(root)})


@app.route("/staff")
def staff():
    uid = request.args["uid"]
    conn = ldap.initialize("ldap://directory.shop.internal")
    return jsonify(conn.search_s("ou=staff,dc=shop", ldap.SCOPE_SUBTREE, "(uid=" + uid + ")"))


@app.route("/staff-safe")
def staff_safe():
    uid = request.args["uid"]
    conn = ldap.initialize("ldap://directory.shop.internal")
    return jsonify(
        conn.search_s("ou=staff,dc=shop", ldap.SCOPE_SUBTREE, "(uid=" + escape_filter_chars(uid) + ")")
    )


@app.route("/products/match")
def match_products():
    pattern = request.args["pattern"]
    return jsonify([p for p in PRODUCTS if re.search(pattern, p)])


@app.route("/products/match-safe")
def match_products_safe():
    pattern = request.args["pattern"]
    return jsonify([p for p in PRODUCTS if re.search(re.escape(pattern), p)])


@app.route("/coupon", methods=["POST"])
def redeem_coupon():
    code = request.form["code"]
    log.warning("coupon rejected: " + code)
    return jsonify({"ok": False})


@app.route("/coupon-safe", methods=["POST"])
def redeem_coupon_safe():
    code = request.form["code"]
    log.warning("coupon rejected: " + code.replace("\r", "").replace("\n", ""))
    return jsonify({"ok": False})


@app.route("/password/reset", methods=["POST"])
def reset_password():
    reset_token = "".join(random.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(32))
    db().execute("UPDATE users SET reset = ? WHERE email = ?", (reset_token, request.form["email"]))
    return jsonify({"sent": True})


@app.route("/password/reset-safe", methods=["POST"])
def reset_password_safe():
    reset_token = secrets.token_urlsafe(32)
    db().execute("UPDATE users SET reset = ? WHERE email = ?", (reset_token, request.form["email"]))
    return jsonify({"sent": True})
