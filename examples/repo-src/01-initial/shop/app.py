"""HTTP routes."""

from flask import Blueprint, abort, jsonify, request, send_file, session

from . import db, files

bp = Blueprint("shop", __name__)


@bp.get("/products")
def products():
    rows = db.list_products(db.get_db(), request.args.get("category"))
    return jsonify([dict(row) for row in rows])


@bp.get("/products/<int:product_id>")
def product(product_id: int):
    row = db.get_product(db.get_db(), product_id)
    if row is None:
        abort(404)
    return jsonify(dict(row))


@bp.post("/cart/add")
def cart_add():
    product_id = int(request.form["product_id"])
    if db.get_product(db.get_db(), product_id) is None:
        abort(404)
    cart = session.setdefault("cart", [])
    cart.append(product_id)
    session.modified = True
    return jsonify({"items": len(cart)})


@bp.get("/uploads/<path:name>")
def upload(name: str):
    return send_file(files.upload_path(name))
