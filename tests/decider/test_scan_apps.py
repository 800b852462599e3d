"""Three small web applications written for this test (Flask, Django, FastAPI), scanned as plain folders at
$0 with the packaged program and memory: every flaw (request data reaching a shell, SQL, a file path, pickle,
yaml.load, a template string, a redirect, an HTTP client, eval, an HTML page, an XML parser resolving
entities, a regular expression, a log line, an LDAP filter or an XPath; md5 for passwords, random for tokens,
a cookie without its flags) is reported at ADVISORY or above, and none of its safe twins (quoted,
parameterised, allow-listed, escaped, safe_load, secrets...) is reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ouroboros_gates.ops.cli import app

APPS = Path(__file__).parent / "data" / "apps"

FLAWS = {
    "flask_shop": {
        "ping": "command_injection",
        "find_user": "sql_injection",
        "download": "path_traversal",
        "restore_cart": "deserialization",
        "import_settings": "deserialization",
        "hello": "code_injection",
        "after_login": "open_redirect",
        "partner_feed": "ssrf",
        "calc": "code_injection",
        "register": "weak_crypto",
        "search": "xss",
        "import_catalog": "xxe",
        "staff": "ldap_injection",
        "match_products": "regex_injection",
        "redeem_coupon": "log_injection",
        "reset_password": "weak_crypto",
    },
    "django_shop": {
        "archive": "command_injection",
        "orders": "sql_injection",
        "report": "path_traversal",
        "load_basket": "deserialization",
        "import_rules": "deserialization",
        "greet": "code_injection",
        "logout_to": "open_redirect",
        "stock": "ssrf",
        "discount": "code_injection",
        "set_password": "weak_crypto",
        "review": "xss",
        "upload_feed": "xxe",
        "product_price": "xpath_injection",
        "filter_orders": "regex_injection",
        "checkout_failed": "log_injection",
        "gift_card": "weak_crypto",
    },
    "fastapi_shop": {
        "lookup": "command_injection",
        "products": "sql_injection",
        "export_file": "path_traversal",
        "resume_session": "deserialization",
        "load_config": "deserialization",
        "welcome": "code_injection",
        "go": "open_redirect",
        "catalog": "ssrf",
        "price_quote": "code_injection",
        "signup": "weak_crypto",
        "banner": "xss",
        "orders_xml": "xxe",
        "find_tags": "regex_injection",
        "track": "log_injection",
        "login": "insecure_cookie",
        "invite": "weak_crypto",
    },
}


@pytest.fixture(autouse=True)
def _embedded_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OURO_STATE", str(tmp_path / "state"))
    for name in (
        "OURO_MODEL",
        "OURO_MODEL_URL",
        "OURO_EMBED_MODEL",
        "OURO_DATABASE_URL",
        "OURO_DECIDER_PROGRAM",
    ):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("name", sorted(FLAWS))
def test_every_flaw_is_reported_and_no_safe_twin_is(name: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["scan", str(APPS / name), "--out", str(out)])
    assert result.exit_code == 0, result.output
    reported = json.loads((out / "findings.json").read_text())
    found = {(f["function"], f["family"]) for f in reported}
    missed = {fn: family for fn, family in FLAWS[name].items() if (fn, family) not in found}
    assert not missed, f"{name}: flaws not reported: {missed}\n{result.output}"
    twins = sorted({f["function"] for f in reported if f["function"].endswith("_safe")})
    assert not twins, f"{name}: safe twins reported: {twins}\n{result.output}"
    assert all(f["decision"]["operating_point"] in ("advisory", "block") for f in reported)
    assert all(f["decision"]["verdict"] != "not_vulnerable" for f in reported)
    flows = [f for f in reported if f["decision"]["evidence"] == "live"]
    assert len(flows) >= 9 and all(
        f["flow"][-1]["line"] == f["line"] for f in flows
    )  # at the sink, with its flow
