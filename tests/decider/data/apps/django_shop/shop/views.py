# ruff: noqa  (vulnerable on purpose: a fixture the scan tests read)
"""A small Django shop's views: each view that handles request data unsafely has a safe twin beside it."""

import ast
import html
import logging
import random
import re
import secrets
import hashlib
import os
import pickle
import subprocess

import requests
import yaml
from lxml import etree
from django.conf import settings
from django.db import connection
from django.http import HttpResponse, HttpResponseBadRequest, HttpResponseRedirect, JsonResponse
from django.template import Context, Template
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import mark_safe

REPORTS = "/srv/shop/reports"
CATALOG = etree.parse("/srv/shop/catalog.xml")
logger = logging.getLogger(__name__)
ALLOWED_BACKENDS = ("https://stock.example.com/api", "https://prices.example.com/api")


def archive(request):
    label = request.GET["label"]
    subprocess.call("tar czf /srv/shop/archives/" + label + ".tgz " + REPORTS, shell=True)
    return HttpResponse("archived")


def archive_safe(request):
    label = request.GET["label"]
    subprocess.call(["tar", "czf", f"/srv/shop/archives/{label}.tgz", REPORTS])
    return HttpResponse("archived")


def orders(request):
    status = request.GET.get("status", "open")
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, total FROM orders WHERE status = '%s'" % status)
        return JsonResponse({"orders": cursor.fetchall()})


def orders_safe(request):
    status = request.GET.get("status", "open")
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, total FROM orders WHERE status = %s", [status])
        return JsonResponse({"orders": cursor.fetchall()})


def report(request, name):
    with open(REPORTS + "/" + name) as fh:
        return HttpResponse(fh.read(), content_type="text/plain")


def report_safe(request, name):
    path = os.path.realpath(os.path.join(REPORTS, name))
    if not path.startswith(REPORTS + os.sep):
        return HttpResponseBadRequest("bad name")
    with open(path) as fh:
        return HttpResponse(fh.read(), content_type="text/plain")


def load_basket(request):
    basket = pickle.loads(request.body)
    return JsonResponse({"items": len(basket)})


def load_basket_safe(request):
    import json

    basket = json.loads(request.body)
    return JsonResponse({"items": len(basket)})


def import_rules(request):
    rules = yaml.load(request.body, Loader=yaml.UnsafeLoader)
    return JsonResponse({"rules": len(rules)})


def import_rules_safe(request):
    rules = yaml.safe_load(request.body)
    return JsonResponse({"rules": len(rules)})


def greet(request):
    name = request.GET.get("name", "")
    return HttpResponse(Template("<p>Welcome back, " + name + "</p>").render(Context({})))


def greet_safe(request):
    name = request.GET.get("name", "")
    return HttpResponse(Template("<p>Welcome back, {{ name }}</p>").render(Context({"name": name})))


def logout_to(request):
    return HttpResponseRedirect(request.GET["next"])


def logout_to_safe(request):
    target = request.GET.get("next", "/")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        target = "/"
    return HttpResponseRedirect(target)


def stock(request):
    backend = request.GET["backend"]
    return JsonResponse(requests.get(backend + "/stock", timeout=5).json())


def stock_safe(request):
    backend = request.GET["backend"]
    if backend not in ALLOWED_BACKENDS:
        return HttpResponseBadRequest("unknown backend")
    return JsonResponse(requests.get(backend + "/stock", timeout=5).json())


def discount(request):
    rule = request.POST["rule"]
    return JsonResponse({"discount": eval(rule)})


def discount_safe(request):
    rule = request.POST["rule"]
    return JsonResponse({"discount": ast.literal_eval(rule)})


def set_password(request):
    password = request.POST["password"]
    request.user.password = hashlib.md5(password.encode("utf-8")).hexdigest()
    request.user.save()
    return HttpResponse("saved")


def set_password_safe(request):
    password = request.POST["password"]
    salt = os.urandom(16)
    request.user.password = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=2**14, r=8, p=1).hex()
    request.user.save()
    return HttpResponse("saved" if settings.DEBUG is not None else "")


def review(request):
    text = request.POST["text"]
    return HttpResponse(mark_safe("<blockquote>%s</blockquote>" % text))


def review_safe(request):
    text = request.POST["text"]
    return HttpResponse("<blockquote>%s</blockquote>" % html.escape(text))


def upload_feed(request):
    feed = etree.fromstring(request.body)
    return JsonResponse({"entries": len(feed)})


def upload_feed_safe(request):
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    feed = etree.fromstring(request.body, parser)
    return JsonResponse({"entries": len(feed)})


def product_price(request):
    sku = request.GET["sku"]
    return JsonResponse({"price": CATALOG.xpath("//product[@sku='" + sku + "']/price/text()")})


def product_price_safe(request):
    sku = request.GET["sku"]
    return JsonResponse({"price": CATALOG.xpath("//product[@sku=$sku]/price/text()", sku=sku)})


def filter_orders(request):
    pattern = re.compile(request.GET["pattern"])
    return JsonResponse({"orders": [o for o in ORDER_IDS if pattern.match(o)]})


def filter_orders_safe(request):
    pattern = re.compile(re.escape(request.GET["pattern"]))
    return JsonResponse({"orders": [o for o in ORDER_IDS if pattern.match(o)]})


def checkout_failed(request):
    reason = request.GET.get("reason", "")
    logger.error(f"checkout failed: {reason}")
    return HttpResponse("sorry")


def checkout_failed_safe(request):
    reason = request.GET.get("reason", "")
    logger.error("checkout failed: %s", repr(reason))
    return HttpResponse("sorry")


def gift_card(request):
    card_pin = random.randint(1000, 9999)
    request.user.gift_pin = card_pin
    request.user.save()
    return JsonResponse({"issued": True})


def gift_card_safe(request):
    card_pin = secrets.randbelow(9000) + 1000
    request.user.gift_pin = card_pin
    request.user.save()
    return JsonResponse({"issued": True})
