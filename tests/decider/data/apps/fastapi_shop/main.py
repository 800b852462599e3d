# ruff: noqa  (vulnerable on purpose: a fixture the scan tests read)
"""A small FastAPI shop: each endpoint that handles request data unsafely has a safe twin beside it."""

import ast
import html
import logging
import random
import re
import secrets
import hashlib
import os
import pickle
import shlex
import sqlite3
import subprocess

import httpx
import yaml
from lxml import etree
from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse
from jinja2 import Environment

app = FastAPI()
logger = logging.getLogger("shop")
EXPORTS = "/srv/shop/exports"
HOMES = {"home": "/", "cart": "/cart"}
MIRRORS = ["https://mirror-a.example.com/catalog.json", "https://mirror-b.example.com/catalog.json"]
env = Environment(autoescape=True)


def db() -> sqlite3.Connection:
    return sqlite3.connect("/srv/shop/shop.db")


@app.get("/lookup/{domain}")
def lookup(domain: str):
    return {"out": subprocess.check_output("nslookup " + domain, shell=True).decode()}


@app.get("/lookup-safe/{domain}")
def lookup_safe(domain: str):
    return {"out": subprocess.check_output("nslookup " + shlex.quote(domain), shell=True).decode()}


@app.get("/products")
def products(sort: str = "name"):
    return db().execute("SELECT id, name FROM products ORDER BY " + sort).fetchall()


@app.get("/products-safe")
def products_safe(sort: str = "name"):
    if sort not in ("name", "price"):
        raise HTTPException(status_code=400)
    return db().execute("SELECT id, name FROM products ORDER BY " + sort).fetchall()


@app.get("/exports/{name}")
def export_file(name: str):
    with open(f"{EXPORTS}/{name}") as fh:
        return fh.read()


@app.get("/exports-safe/{name}")
def export_file_safe(name: str):
    with open(os.path.join(EXPORTS, os.path.basename(name))) as fh:
        return fh.read()


@app.post("/session")
async def resume_session(request: Request):
    return {"session": str(pickle.loads(await request.body()))}


@app.post("/session-safe")
async def resume_session_safe(request: Request):
    return {"session": await request.json()}


@app.post("/config")
async def load_config(request: Request):
    return yaml.unsafe_load(await request.body())


@app.post("/config-safe")
async def load_config_safe(request: Request):
    return yaml.load(await request.body(), Loader=yaml.SafeLoader)


@app.get("/welcome", response_class=HTMLResponse)
def welcome(name: str = ""):
    return env.from_string("<h1>Welcome " + name + "</h1>").render()


@app.get("/welcome-safe", response_class=HTMLResponse)
def welcome_safe(name: str = ""):
    return env.from_string("<h1>Welcome {{ name }}</h1>").render(name=name)


@app.get("/go")
def go(to: str):
    return RedirectResponse(to)


@app.get("/go-safe")
def go_safe(to: str):
    if to not in HOMES:
        raise HTTPException(status_code=400)
    return RedirectResponse(HOMES[to])


@app.get("/catalog")
def catalog(source: str):
    return httpx.get(source, timeout=5).json()


@app.get("/catalog-safe")
def catalog_safe(source: str):
    if source not in MIRRORS:
        raise HTTPException(status_code=400)
    return httpx.get(source, timeout=5).json()


@app.get("/quote")
def price_quote(formula: str):
    return {"price": eval(formula)}


@app.get("/quote-safe")
def price_quote_safe(formula: str):
    return {"price": ast.literal_eval(formula)}


@app.post("/signup")
def signup(user: str, password: str):
    db().execute("INSERT INTO users VALUES (?, ?)", (user, hashlib.md5(password.encode()).hexdigest()))
    return {"ok": True}


@app.post("/signup-safe")
def signup_safe(user: str, password: str):
    salt = os.urandom(16)
    hashed = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, 600_000).hex()
    db().execute("INSERT INTO users VALUES (?, ?, ?)", (user, hashed, salt.hex()))
    return {"ok": True}


@app.get("/banner", response_class=HTMLResponse)
def banner(title: str):
    return HTMLResponse(f"<div class='banner'>{title}</div>")


@app.get("/banner-safe", response_class=HTMLResponse)
def banner_safe(title: str):
    return HTMLResponse(f"<div class='banner'>{html.escape(title)}</div>")


@app.post("/orders/xml")
async def orders_xml(request: Request):
    doc = etree.fromstring(await request.body(), etree.XMLParser(resolve_entities=True))
    return {"orders": len(doc)}


@app.post("/orders/xml-safe")
async def orders_xml_safe(request: Request):
    doc = etree.fromstring(await request.body(), etree.XMLParser(resolve_entities=False, no_network=True))
    return {"orders": len(doc)}


@app.get("/tags")
def find_tags(pattern: str):
    return {"tags": [t for t in TAGS if re.fullmatch(pattern, t)]}


@app.get("/tags-safe")
def find_tags_safe(pattern: str):
    return {"tags": [t for t in TAGS if re.fullmatch(re.escape(pattern), t)]}


@app.get("/track/{parcel}")
def track(parcel: str):
    logger.info("tracking parcel %s", parcel)
    return {"parcel": parcel}


@app.get("/track-safe/{parcel}")
def track_safe(parcel: str):
    logger.info("tracking parcel %s", parcel.replace("\n", " ").replace("\r", " "))
    return {"parcel": parcel}


@app.post("/login")
def login(user: str):
    response = JSONResponse({"ok": True})
    response.set_cookie("session", issue_session(user))
    return response


@app.post("/login-safe")
def login_safe(user: str):
    response = JSONResponse({"ok": True})
    response.set_cookie("session", issue_session(user), secure=True, httponly=True, samesite="lax")
    return response


@app.post("/invite")
def invite(email: str):
    invite_code = "%06d" % random.randrange(1_000_000)
    db().execute("INSERT INTO invites VALUES (?, ?)", (email, invite_code))
    return {"sent": True}


@app.post("/invite-safe")
def invite_safe(email: str):
    invite_code = "%06d" % secrets.randbelow(1_000_000)
    db().execute("INSERT INTO invites VALUES (?, ?)", (email, invite_code))
    return {"sent": True}
