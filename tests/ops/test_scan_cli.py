"""``ouro scan`` on the example repository: the embedded default (memory vote, $0) and the LM program
against the scripted model server, valid SARIF, the ledger's decision rows, and ``--fail-on``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from ouroboros_gates.decider.folder import TEST_REASON
from ouroboros_gates.decider.program import OperatingPoint, Program
from ouroboros_gates.events import SqlEventStore
from ouroboros_gates.events.projections.decisions import decisions
from ouroboros_gates.ops.cli import app
from ouroboros_gates.schemas.errors import OuroError

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "tests" / "decider" / "data" / "sarif-schema-2.1.0.json").read_text())


@pytest.fixture
def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = tmp_path / "shop"
    subprocess.run(["git", "clone", "-q", str(ROOT / "examples" / "repo.bundle"), str(repo)], check=True)
    monkeypatch.setenv("OURO_STATE", str(tmp_path / "state"))
    for name in (
        "OURO_MODEL",
        "OURO_MODEL_URL",
        "OURO_EMBED_MODEL",
        "OURO_DATABASE_URL",
        "OURO_DECIDER_PROGRAM",
    ):
        monkeypatch.delenv(name, raising=False)
    return repo


def rows(state: Path) -> list[Any]:
    store = SqlEventStore.from_url(f"sqlite:///{state / 'events.sqlite'}")
    with store.reading() as conn:
        return list(conn.execute(select(decisions)).mappings())


def test_scan_on_the_embedded_default(shop: Path) -> None:
    result = CliRunner().invoke(app, ["scan", str(shop), "--fail-on", "blocked"])
    assert result.exit_code == 0, result.output
    out = shop / ".ouroboros" / "scan"
    sarif = json.loads((out / "findings.sarif").read_text())
    jsonschema.Draft4Validator(SCHEMA).validate(sarif)
    findings = json.loads((out / "findings.json").read_text())
    assert findings and {f["decision"]["variant"] for f in findings} == {"memory-vote"}
    assert {f["decision"]["operating_point"] for f in findings} <= {"advisory", "block"}
    assert "memory-vote program (no chat model configured)" in result.output
    meta = json.loads((out / "manifest.json").read_text())["decision"]
    assert meta["usd"] == 0 and meta["variant"] == "memory-vote"
    ledger = rows(shop.parent / "state")
    dropped = json.loads((out / "dropped_by_engine.json").read_text())
    assert len(ledger) == len(findings) + len(dropped) and {r["program_id"] for r in ledger} == {
        meta["program_id"]
    }
    again = CliRunner().invoke(app, ["scan", str(shop), "--fail-on", "findings"])
    assert again.exit_code == 1  # ADVISORY findings exist
    assert len(rows(shop.parent / "state")) == len(ledger)  # same decisions, same rows


def test_scan_with_the_lm_program_against_the_fake_model(
    shop: Path, model_server: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    program = Program(
        kind="llm-program",
        k=1,
        operating_points={"*": OperatingPoint(advisory=0.4, block=0.8, block_offered=True)},
    )
    path = tmp_path / "program.json"
    path.write_text(program.to_json())
    monkeypatch.setenv("OURO_DECIDER_PROGRAM", str(path))
    monkeypatch.setenv("OURO_MODEL", "local")
    monkeypatch.setenv("OURO_MODEL_URL", model_server.url + "/v1")
    yes = {
        "verdict": "vulnerable",
        "family": "x",
        "confidence": 0.9,
        "rationale": "Line 22 runs a shell.",
        "cited_lines": [22],
    }
    model_server.script(
        [{"contains": "def export_report", "content": yes}],
        default={
            "content": {**yes, "verdict": "not_vulnerable", "rationale": "see line 1", "cited_lines": []}
        },
    )
    result = CliRunner().invoke(app, ["scan", str(shop), "--fail-on", "blocked"])
    assert result.exit_code == 1, result.output  # a BLOCK
    findings = json.loads((shop / ".ouroboros" / "scan" / "findings.json").read_text())
    blocked = [f for f in findings if f["decision"]["operating_point"] == "block"]
    assert blocked and {f["function"] for f in blocked} == {"export_report"}
    assert (
        blocked[0]["decision"]["cited_lines"] == [22]
        and blocked[0]["decision"]["program_id"] == program.program_id
    )
    jsonschema.Draft4Validator(SCHEMA).validate(
        json.loads((shop / ".ouroboros" / "scan" / "findings.sarif").read_text())
    )
    assert any(r["action"] == "BLOCK" for r in rows(shop.parent / "state"))


_VULNERABLE = """import os
import sqlite3
from flask import request


def listing(folder):
    target = "ls " + folder
    return os.system(target)


def lookup(db: sqlite3.Connection):
    name = request.args.get("name")
    query = "SELECT * FROM users WHERE name = '" + name + "'"
    return db.execute(query).fetchall()
"""


def test_scan_of_a_plain_folder_reads_it_from_disk(tmp_path: Path, shop: Path) -> None:
    plain = tmp_path / "plain"
    (plain / "app").mkdir(parents=True)
    (plain / "app" / "views.py").write_text(_VULNERABLE)
    (plain / "app" / "broken.py").write_text("def oops(:\n    return\n")
    (plain / "app" / "blob.py").write_bytes(b"x = 1\0\0binary")
    (plain / "app" / "huge.py").write_text("x = 1\n" * 200_000)
    (plain / "app" / "loop").symlink_to(plain / "app", target_is_directory=True)
    (tmp_path / "outside.py").write_text(_VULNERABLE)
    (plain / "app" / "escape.py").symlink_to(tmp_path / "outside.py")
    (plain / "README.md").write_text("not source")
    result = CliRunner().invoke(app, ["scan", str(plain)])
    assert result.exit_code == 0, result.output
    meta = json.loads((plain / ".ouroboros" / "scan" / "manifest.json").read_text())
    scanned = meta["scanned"]
    assert scanned["files"] == 1 and scanned["other_files"] == 1
    reasons = {row["path"]: row["reason"] for row in scanned["skipped"]}
    assert reasons["app/broken.py"].startswith("does not parse")
    assert reasons["app/blob.py"].startswith("binary")
    assert reasons["app/huge.py"].startswith("huge")
    assert reasons["app/loop"].startswith("symlink loop")
    assert reasons["app/escape.py"].startswith("outside the scanned root")
    found = json.loads((plain / ".ouroboros" / "scan" / "findings.json").read_text())
    dropped = json.loads((plain / ".ouroboros" / "scan" / "dropped_by_engine.json").read_text())
    decided = {(f["path"], f["function"], f["family"]) for f in found + dropped}
    assert ("app/views.py", "lookup", "sql_injection") in decided
    listing = next(f for f in found + dropped if f["function"] == "listing")
    taint = [s["message"] for s in listing["signals"] if s["instrument"] == "taint"]
    assert taint == [
        "parameter (line 6) reaches os.system (command) at line 8"
    ]  # which source, which sink, where
    assert "skipped 5 path(s)" in result.output


def test_scan_of_a_subfolder_of_a_checkout_scans_only_that_folder(tmp_path: Path, shop: Path) -> None:
    every = CliRunner().invoke(app, ["scan", str(shop), "--out", str(tmp_path / "all")])
    assert every.exit_code == 0, every.output
    paths = {
        f["path"]
        for name in ("findings.json", "dropped_by_engine.json")
        for f in json.loads((tmp_path / "all" / name).read_text())
    }
    first = sorted(paths)[0]
    folder = first.rsplit("/", 1)[0] if "/" in first else ""
    ignored = shop / "untracked_dir"
    ignored.mkdir()
    (ignored / "views.py").write_text(_VULNERABLE)
    (shop / ".gitignore").write_text("untracked_dir/\n")
    one = CliRunner().invoke(app, ["scan", str(ignored), "--out", str(tmp_path / "one")])
    assert one.exit_code == 0, one.output
    got = {
        f["path"]
        for name in ("findings.json", "dropped_by_engine.json")
        for f in json.loads((tmp_path / "one" / name).read_text())
    }
    assert got == {"untracked_dir/views.py"}  # a git-ignored folder given is scanned, and nothing else
    if folder:
        sub = CliRunner().invoke(app, ["scan", str(shop / folder), "--out", str(tmp_path / "sub")])
        assert sub.exit_code == 0, sub.output
        got = {
            f["path"]
            for name in ("findings.json", "dropped_by_engine.json")
            for f in json.loads((tmp_path / "sub" / name).read_text())
        }
        assert got and all(p.startswith(folder + "/") for p in got)


def test_scan_bad_arguments_are_one_error(tmp_path: Path, shop: Path) -> None:
    missing = CliRunner().invoke(app, ["scan", str(tmp_path / "nowhere")])
    assert isinstance(missing.exception, OuroError) and "no such file or directory" in str(missing.exception)
    plain = tmp_path / "plain"
    plain.mkdir()
    delta = CliRunner().invoke(app, ["scan", str(plain), "--base", "HEAD~1"])
    assert isinstance(delta.exception, OuroError) and "not in a git checkout" in str(delta.exception)


def test_a_report_folder_that_cannot_be_written_is_one_error_before_the_scan(
    tmp_path: Path, shop: Path
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "views.py").write_text(_VULNERABLE)
    (plain / ".ouroboros").write_text("a file where the report folder would go")
    default = CliRunner().invoke(app, ["scan", str(plain)])
    assert isinstance(default.exception, OuroError), default.output
    assert str(default.exception).startswith(
        f"--out: cannot write the reports to {plain / '.ouroboros' / 'scan'}"
    )
    given = CliRunner().invoke(app, ["scan", str(shop), "--out", str(plain / "views.py")])
    assert isinstance(given.exception, OuroError) and "give --out DIR" in str(given.exception)
    assert not (shop.parent / "state" / "events.sqlite").exists() or not rows(
        shop.parent / "state"
    )  # nothing decided
    done = CliRunner().invoke(app, ["scan", str(plain), "--out", str(tmp_path / "reports")])
    assert done.exit_code == 0, done.output
    assert (tmp_path / "reports" / "findings.json").exists()


def test_scan_base_keeps_the_delta_mode(tmp_path: Path, shop: Path) -> None:
    result = CliRunner().invoke(app, ["scan", str(shop), "--base", "HEAD~1", "--out", str(tmp_path / "d")])
    assert result.exit_code == 0, result.output
    meta = json.loads((tmp_path / "d" / "manifest.json").read_text())
    assert meta["base"] is not None and meta["scanned"]["rev"] == meta["head"]


def test_scan_of_files_scans_only_those_files(tmp_path: Path, shop: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "views.py").write_text(_VULNERABLE)
    (plain / "other.py").write_text(_VULNERABLE)
    result = CliRunner().invoke(app, ["scan", str(plain / "views.py"), "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    got = {
        f["path"]
        for name in ("findings.json", "dropped_by_engine.json")
        for f in json.loads((tmp_path / "r" / name).read_text())
    }
    assert got == {"views.py"}
    assert json.loads((tmp_path / "r" / "manifest.json").read_text())["scanned"]["files"] == 1


def _decided_paths(out: Path) -> set[str]:
    return {
        f["path"]
        for name in ("findings.json", "dropped_by_engine.json")
        for f in json.loads((out / name).read_text())
    }


def test_below_a_path_dependencies_git_ignored_and_excluded_paths_are_left_out_and_said(
    tmp_path: Path, shop: Path
) -> None:
    for folder in (
        "lib",
        "venv/lib/python3.11/site-packages/dep",
        "web/node_modules/pkg",
        "build",
        "app_tests",
    ):
        (shop / folder).mkdir(parents=True)
        (shop / folder / "views.py").write_text(_VULNERABLE)
    (shop / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")  # a virtualenv under any name
    (shop / ".gitignore").write_text("build/\n")
    result = CliRunner().invoke(
        app, ["scan", str(shop), "--exclude", "app_tests", "--out", str(tmp_path / "r")]
    )
    assert result.exit_code == 0, result.output
    reasons = {
        r["path"]: r["reason"]
        for r in json.loads((tmp_path / "r" / "manifest.json").read_text())["scanned"]["skipped"]
    }
    assert reasons == {
        "venv": "left out: a virtualenv (pyvenv.cfg)",
        "web/node_modules": "left out: node_modules holds dependencies or caches, not the project's source",
        "build": "left out: ignored by git",
        "app_tests": "left out: --exclude app_tests",
        "tests": TEST_REASON,  # the example repository's own tests
    }
    assert "venv (left out: a virtualenv (pyvenv.cfg))" in result.output  # said, not only written down
    decided = _decided_paths(tmp_path / "r")
    assert "lib/views.py" in decided
    assert not {p for p in decided if p.startswith(("venv/", "web/", "build/", "app_tests/"))}
    # a path given as PATH is always scanned, ignored or not
    given = CliRunner().invoke(app, ["scan", str(shop / "build"), "--out", str(tmp_path / "b")])
    assert given.exit_code == 0, given.output
    assert _decided_paths(tmp_path / "b") == {"build/views.py"}
    # a commit's files: --exclude leaves its paths out there too
    subprocess.run(["git", "-C", str(shop), "add", "lib", "app_tests"], check=True)
    subprocess.run(
        ["git", "-C", str(shop), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "more"],
        check=True,
    )
    rev = CliRunner().invoke(
        app, ["scan", str(shop), "--rev", "HEAD", "--exclude", "app_tests", "--out", str(tmp_path / "c")]
    )
    assert rev.exit_code == 0, rev.output
    committed = _decided_paths(tmp_path / "c")
    assert "lib/views.py" in committed and not {p for p in committed if p.startswith("app_tests/")}


def test_test_code_below_a_path_is_left_out_unless_asked_for_or_given(tmp_path: Path, shop: Path) -> None:
    plain = tmp_path / "plain"  # no git: the test runners' conventions alone say what is test code
    for name in (
        "app.py",
        "tests/test_views.py",
        "test_app.py",
        "pkg/conftest.py",
        "pkg/views_test.py",
        "pkg/testing.py",
        "app_tests/views.py",
    ):
        (plain / name).parent.mkdir(parents=True, exist_ok=True)
        (plain / name).write_text(_VULNERABLE)
    result = CliRunner().invoke(app, ["scan", str(plain), "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    reasons = {
        r["path"]: r["reason"]
        for r in json.loads((tmp_path / "r" / "manifest.json").read_text())["scanned"]["skipped"]
    }
    assert reasons == {
        path: TEST_REASON for path in ("tests", "test_app.py", "pkg/conftest.py", "pkg/views_test.py")
    }
    assert f"tests ({TEST_REASON})" in result.output
    assert _decided_paths(tmp_path / "r") == {"app.py", "pkg/testing.py", "app_tests/views.py"}
    asked = CliRunner().invoke(app, ["scan", str(plain), "--tests", "--out", str(tmp_path / "t")])
    assert asked.exit_code == 0, asked.output
    assert {"tests/test_views.py", "pkg/conftest.py"} <= _decided_paths(tmp_path / "t")
    # a test folder given as PATH is scanned, tests and all
    given = CliRunner().invoke(app, ["scan", str(plain / "tests"), "--out", str(tmp_path / "g")])
    assert given.exit_code == 0, given.output
    assert _decided_paths(tmp_path / "g") == {"test_views.py"}
    # a commit's files: the same, in the checkout
    (shop / "tests" / "test_views.py").write_text(_VULNERABLE)
    (shop / "shop" / "views.py").write_text(_VULNERABLE)
    subprocess.run(["git", "-C", str(shop), "add", "tests", "shop"], check=True)
    subprocess.run(
        ["git", "-C", str(shop), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "views"],
        check=True,
    )
    for args, out, tests_decided in (
        ([str(shop), "--base", "HEAD~1"], "c", False),
        ([str(shop), "--base", "HEAD~1", "--tests"], "d", True),
        ([str(shop / "tests"), "--base", "HEAD~1"], "e", True),
    ):
        rev = CliRunner().invoke(app, ["scan", *args, "--out", str(tmp_path / out)])
        assert rev.exit_code == 0, rev.output
        decided = _decided_paths(tmp_path / out)
        assert ("tests/test_views.py" in decided) is tests_decided, (args, decided)
        assert ("shop/views.py" in decided) is (args[0] == str(shop)), (args, decided)


def test_an_instrument_that_fails_on_a_file_is_named_with_its_count(tmp_path: Path, shop: Path) -> None:
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    (legacy / "old.py").write_text(
        'import os\n\n\ndef run(cmd):\n    print "running", cmd\n    os.system(cmd)\n'
    )
    (legacy / "new.py").write_text('import os\n\n\ndef run(d):\n    os.system(f"ls {d["path"]}")\n')
    result = CliRunner().invoke(app, ["scan", str(legacy)])
    assert result.exit_code == 0, result.output
    out = legacy / ".ouroboros" / "scan"
    meta = json.loads((out / "manifest.json").read_text())
    assert meta["instruments_failed"] == {
        "bandit": {"files": 1, "paths": ["old.py"]}
    }  # Python 2: no parser here
    assert "instrument failed: bandit on 1 file(s)" in result.output
    assert "**instrument failed: bandit on 1 file(s)" in (out / "findings.md").read_text()
    notes = json.loads((out / "findings.sarif").read_text())["runs"][0]["invocations"][0][
        "toolExecutionNotifications"
    ]
    assert [n["descriptor"]["id"] for n in notes] == ["bandit"]
    found = json.loads((out / "findings.json").read_text()) + json.loads(
        (out / "dropped_by_engine.json").read_text()
    )
    new = next(f for f in found if f["path"] == "new.py")  # a 3.12 f-string: Bandit read it all the same
    assert new["record"]["instruments"]["bandit"]["state"] == "ran" and "B605" in {
        s["rule"] for s in new["signals"]
    }
    assert "scanned 2 file(s) (0 left out or skipped)" in result.output  # not a terminal: one summary line


_FLASK = """from flask import Flask, request
import subprocess

app = Flask(__name__)


@app.route("/ping")
def ping():
    host = request.args["host"]
    subprocess.run("ping -c 1 " + host, shell=True)
"""


def test_priors_detected_by_the_files_imports_and_said_in_every_decision(tmp_path: Path, shop: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "app.py").write_text(_FLASK)
    detected = CliRunner().invoke(app, ["scan", str(site), "--out", str(tmp_path / "on")])
    off = CliRunner().invoke(app, ["scan", str(site), "--out", str(tmp_path / "off"), "--priors", "off"])
    assert detected.exit_code == 0 and off.exit_code == 0, detected.output + off.output
    (on_finding,) = json.loads((tmp_path / "on" / "findings.json").read_text())
    assert on_finding["decision"]["priors"] == ["flask"] and on_finding["decision"]["evidence"] == "live"
    assert on_finding["line"] == 10 and [s["line"] for s in on_finding["flow"]] == [9, 10]
    every = json.loads((tmp_path / "off" / "findings.json").read_text())
    every += json.loads((tmp_path / "off" / "dropped_by_engine.json").read_text())
    assert all(f["decision"]["priors"] == [] for f in every)  # no Flask source: no flow from request.args
    assert not [f for f in every if f["flow"] and f["flow"][0]["text"] == "request.args"]
    assert json.loads((tmp_path / "on" / "manifest.json").read_text())["priors"] == {
        "setting": "detected",
        "on_for_candidates": {"flask": 1},
    }
