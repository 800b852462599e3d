import sqlite3

from shop import db


def make_conn():
    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row
    db.init_db(conn)
    conn.executemany(
        "INSERT INTO products (name, category, price_cents) VALUES (?, ?, ?)",
        [("Mug", "kitchen", 1200), ("Teapot", "kitchen", 3400), ("Lamp", "living", 5600)],
    )
    return conn


def test_list_products_by_category():
    names = [row["name"] for row in db.list_products(make_conn(), "kitchen")]
    assert names == ["Mug", "Teapot"]


def test_get_product_missing():
    assert db.get_product(make_conn(), 99) is None


def test_order_history_newest_first():
    conn = make_conn()
    conn.executemany(
        "INSERT INTO orders (user_id, created_at, total_cents) VALUES (?, ?, ?)",
        [(7, "2026-09-01T10:00:00Z", 1200), (7, "2026-09-03T10:00:00Z", 3400), (8, "2026-09-02T10:00:00Z", 99)],
    )
    totals = [row["total_cents"] for row in db.order_history(conn, 7)]
    assert totals == [3400, 1200]


def test_search_binds_the_term():
    conn = make_conn()
    assert [row["name"] for row in db.search_products(conn, "ea")] == ["Teapot"]
    assert db.search_products(conn, "' OR '1'='1") == []
    assert db.search_products(conn, "%") == []
