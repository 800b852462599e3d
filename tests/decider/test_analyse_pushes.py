"""analyse() on the example repository's pushes, on every language, on a file that does not parse."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from _decider_support import GIT_ENV
from test_instruments_memory import FIXED, VULNERABLE

from ouroboros_gates.decider import Analysed, analyse
from ouroboros_gates.schemas import State

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ENV = GIT_ENV


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    bare = tmp_path_factory.mktemp("shop") / "shop.git"
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(EXAMPLES / "repo.bundle"), str(bare)], env=ENV, check=True
    )
    return bare


def _pushes() -> list[dict[str, str]]:
    return [json.loads(line) for line in (EXAMPLES / "pushes.jsonl").read_text().splitlines()]


def _keys(found: list[Analysed]) -> set[tuple[str, str, str]]:
    return {(a.candidate.path, a.candidate.function, a.candidate.family) for a in found}


def test_the_example_pushes(shop: Path) -> None:
    benign, vulnerable, fix = (analyse(shop, p["head"], p["base"], p["repo"]) for p in _pushes())
    assert benign == []
    assert {
        ("shop/db.py", "search_products", "sql_injection"),
        ("shop/reports.py", "export_report", "command_injection"),
        ("shop/files.py", "invoice_path", "path_traversal"),
        ("shop/static/cart.js", "renderSearchHeading", "xss"),
    } <= _keys(vulnerable)
    assert all(a.record.x["delta.novelty"] in {"new", "worsened", "unchanged"} for a in vulnerable)
    sql = next(a for a in vulnerable if a.candidate.function == "search_products")
    assert sql.record.x["delta.novelty"] == "new"
    assert {s.instrument for s in sql.signals} == {"qr", "bandit", "roles", "taint"}
    assert ("shop/db.py", "search_products", "sql_injection") not in _keys(fix)


def test_analysed_fields_are_coherent(shop: Path) -> None:
    push = _pushes()[1]
    for item in analyse(shop, push["head"], push["base"], push["repo"]):
        assert item.candidate.pin == push["head"] and item.record.candidate == item.candidate
        assert item.start_line <= item.end_line
        assert len(item.code.splitlines()) == item.end_line - item.start_line + 1
        assert set(item.changed_lines) <= set(range(item.start_line, item.end_line + 1))
        assert item.record.x["delta.changed_lines"] == len(item.changed_lines)
        assert item.signals and all(s.family == item.candidate.family for s in item.signals)
        assert all(item.start_line <= s.line <= item.end_line for s in item.signals)


FIXTURES = {
    "py/app.py": ("import os\n\ndef run(cmd):\n    os.system(cmd)\n", "python", "command_injection"),
    "js/ui.js": ("function show(el, q) {\n  el.innerHTML = '<b>' + q;\n}\n", "javascript", "xss"),
    "ts/net.ts": (
        "import { exec } from 'child_process';\nexport function go(dir: string): void {\n  exec(`ls "
        "${dir}`);\n}\n",
        "typescript",
        "command_injection",
    ),
    "java/Repo.java": (
        "class Repo {\n  Object find(String id) {\n"
        '    return stmt.executeQuery("SELECT * FROM t WHERE id = " + id);\n  }\n}\n',
        "java",
        "sql_injection",
    ),
    "php/prefs.php": (
        "<?php\nfunction prefs() {\n  return unserialize($_COOKIE['p']);\n}\n",
        "php",
        "deserialization",
    ),
    "c/main.c": (
        "#include <string.h>\nvoid copy(char *dst, char *src) {\n  strcpy(dst, src);\n}\n",
        "c",
        "memory_safety",
    ),
    "cpp/run.cpp": (
        "#include <cstdlib>\nvoid Shell::run(const char *c) {\n  system(c);\n}\n",
        "cpp",
        "command_injection",
    ),
}


def _commit(root: Path, files: dict[str, str]) -> str:
    if not root.exists():
        root.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, env=ENV, check=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    subprocess.run(["git", "add", "-A"], cwd=root, env=ENV, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "c"], cwd=root, env=ENV, check=True)
    done = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=root, env=ENV, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def test_a_scan_finds_a_candidate_in_every_language(tmp_path: Path) -> None:
    head = _commit(tmp_path / "r", {path: text for path, (text, _, _) in FIXTURES.items()})
    found = analyse(tmp_path / "r", head, None, "o/r")
    for path, (_, language, family) in FIXTURES.items():
        mine = [a for a in found if a.candidate.path == path]
        assert mine and {a.language for a in mine} == {language}, path
        assert family in {a.candidate.family for a in mine}, path
        assert all(a.candidate.function != "<global>" for a in mine), path
        assert all(a.record.x[f"lang.{language}"] is True for a in mine)
    bandit = {a.language: a.record.instruments["bandit"].state for a in found}
    assert bandit["python"] is State.RAN and bandit["javascript"] is State.NOT_APPLICABLE


def test_a_file_that_does_not_parse_says_failed_instead_of_crashing(tmp_path: Path) -> None:
    broken = "import os\n\ndef run(cmd):\n    os.system(cmd)\n\ndef broken(:\n    pass\n"
    head = _commit(
        tmp_path / "r", {"bad.py": broken, "ok.py": "import os\n\ndef run(cmd):\n    os.system(cmd)\n"}
    )
    found = {a.candidate.path: a for a in analyse(tmp_path / "r", head, None, "o/r")}
    bad = found["bad.py"].record
    assert bad.instruments["facts"].state is State.FAILED and bad.x["facts.callers"] is None
    assert bad.instruments["roles"].state is State.FAILED and bad.instruments["bandit"].state is State.FAILED
    assert bad.instruments["qr"].state is State.RAN and bad.x["qr.enabled_hits"] == 1
    assert found["ok.py"].record.instruments["facts"].state is State.RAN


def test_framework_priors_raise_signals_only_when_switched_on(tmp_path: Path) -> None:
    code = "from flask import send_file\n\ndef download(name):\n    return send_file(name)\n"
    head = _commit(tmp_path / "r", {"app.py": code})
    assert analyse(tmp_path / "r", head, None, "o/r", priors="off") == []
    (item,) = analyse(tmp_path / "r", head, None, "o/r", priors="all")
    assert item.candidate.family == "path_traversal" and item.record.x["qr.prior_hits"] == 1
    assert item.record.x["roles.sink_origin"] == "prior"
    (detected,) = analyse(tmp_path / "r", head, None, "o/r")  # the default: the file imports flask
    assert detected.priors == ("flask",) and detected.candidate.family == "path_traversal"


def test_detected_priors_are_what_each_file_imports(tmp_path: Path) -> None:
    route = (
        "from flask import request\nimport os\n\ndef ping():\n    os.system('ping ' + request.args['h'])\n"
    )
    bare = route.replace("from flask import request\n", "")  # a global named request, not Flask's
    head = _commit(tmp_path / "r", {"app.py": route, "other.py": bare})
    found = {a.candidate.path: a for a in analyse(tmp_path / "r", head, None, "o/r")}
    assert (
        found["app.py"].flows[0].source_kind == "request"
        and found["app.py"].flows[0].source == "request.args"
    )
    assert (
        "other.py" not in found or not found["other.py"].flows
    )  # no Flask source where flask is not imported
    assert not [f for a in analyse(tmp_path / "r", head, None, "o/r", priors="off") for f in a.flows]


def test_a_push_reports_a_removed_sanitizer(tmp_path: Path) -> None:
    safe = "import os\n\ndef path(root, name):\n    return os.path.realpath(os.path.join(root, name))\n"
    base = _commit(tmp_path / "r", {"files.py": safe})
    head = _commit(tmp_path / "r", {"files.py": safe.replace("os.path.realpath(", "(")})
    (item,) = analyse(tmp_path / "r", head, base, "o/r")
    assert item.record.x["delta.sanitizer_removed"] is True
    assert item.record.x["delta.novelty"] == "unchanged" and item.changed_lines == (4,)
    assert item.base_code == safe.split("\n\n", 1)[1].rstrip("\n") and "realpath" not in item.code


def test_a_push_that_removes_the_fix_is_a_memory_candidate_with_fewer_tests(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    fixed = _commit(repo, {"put.c": FIXED})
    vulnerable = _commit(repo, {"put.c": VULNERABLE})
    (introducing,) = analyse(repo, vulnerable, fixed, "o/r")
    assert introducing.candidate.family == "memory_safety"
    assert introducing.record.instruments["taint"].state is State.RAN
    assert introducing.record.x["delta.tests"] == "fewer" and introducing.record.x["taint.flows"] == 4
    assert (
        introducing.record.x["delta.novelty"] == "worsened"
    )  # four flows live at head that were checked at base
    again = _commit(repo, {"put.c": FIXED})
    (repair,) = analyse(repo, again, vulnerable, "o/r")  # still a candidate: the roles step sees memcpy
    assert repair.record.x["delta.tests"] == "more" and repair.record.x["taint.flows"] == 0
    assert repair.record.x["delta.novelty"] == "unchanged"
    assert repair.record.x["taint.sanitized_flows"] == 3 and not any(
        s.instrument == "taint" for s in repair.signals
    )
