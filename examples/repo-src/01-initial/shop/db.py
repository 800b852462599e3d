"""Database access. Every query binds its values as parameters."""

import sqlite3
from pathlib import Path

from flask import current_app, g


def get_db() -> sqlite3.Connection:
    if "db" not in g:
        g.db = sqlite3.connect(current_app.config["DATABASE"])
        g.db.row_factory = sqlite3.Row
    return g.db


def init_db(conn: sqlite3.Connection) -> None:
    schema = Path(__file__).resolve().parent.parent / "schema.sql"
    conn.executescript(schema.read_text())


def get_product(conn: sqlite3.Connection, product_id: int) -> sqlite3.Row | None:
    cur = conn.execute(
        "SELECT id, name, category, price_cents FROM products WHERE id = ?",
        (product_id,),
    )
    return cur.fetchone()


def list_products(conn: sqlite3.Connection, category: str | None = None) -> list[sqlite3.Row]:
    if category is None:
        cur = conn.execute("SELECT id, name, category, price_cents FROM products ORDER BY name")
    else:
        cur = conn.execute(
            "SELECT id, name, category, price_cents FROM products WHERE category = ? ORDER BY name",
            (category,),
        )
    return cur.fetchall()
