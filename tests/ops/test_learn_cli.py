"""``ouro learn`` and ``ouro experiment`` as a user runs them: labels → memory build → evaluate at $0, compile
and a registered experiment against the scripted model server, replayed at $0."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ouroboros_gates.decider.program import Program
from ouroboros_gates.ops.cli import app

ROOT = Path(__file__).resolve().parents[2]
PAIRS = [
    "sql_injection/python-delete-note",
    "sql_injection/python-orders-lookup",
    "sql_injection/python-user-search",
    "sql_injection/python-inventory-count",
    "command_injection/python-ping-host",
    "command_injection/python-convert-image",
    "command_injection/python-dns-lookup",
    "path_traversal/python-download-file",
    "path_traversal/python-template-read",
    "deserialization/python-session-restore",
    "deserialization/python-config-load",
    "benign/python-ping-timeout",
]
SOURCES = """[[source]]
id = "fixture-pairs"
kind = "pairs"
path = "pairs"
status = "development"
record = "README.md"
recorded = "2026-11-30"
licence = "Apache-2.0"
"""
ANSWER = {
    "verdict": "vulnerable",
    "family": "sql_injection",
    "confidence": 0.8,
    "rationale": "Line 2 passes the caller's value on.",
    "cited_lines": [2],
}
PROPOSALS = {"instructions": [f"Instruction {i}." for i in range(6)]}


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in PAIRS:
        shutil.copytree(ROOT / "ruleset" / "pairs" / name, tmp_path / "pairs" / name)
    (tmp_path / "sources.toml").write_text(SOURCES)
    monkeypatch.setenv("OURO_STATE", str(tmp_path / "state"))
    for key in ("OURO_DATABASE_URL", "OURO_MODEL", "OURO_MODEL_URL"):
        monkeypatch.delenv(key, raising=False)
    return tmp_path


def ouro(*args: str) -> Any:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def _labels_and_memory(tmp: Path) -> None:
    ouro("learn", "labels", "--corpus", str(tmp / "pairs"), "--sources", str(tmp / "sources.toml"))
    built = ouro("learn", "memory", "build")
    assert "examples from 45 labelled units" in built.output


def test_labels_memory_evaluate_at_zero_cost(env: Path) -> None:
    labelled = ouro("learn", "labels", "--corpus", str(env / "pairs"), "--sources", str(env / "sources.toml"))
    assert "45 units in" in labelled.output and "sql_injection:" in labelled.output
    built = ouro("learn", "memory", "build").output
    assert "new examples in the decider's store" in built
    assert "stored: 0 new examples" in ouro("learn", "memory", "build").output  # idempotent by example id
    report = ouro("learn", "evaluate", "--resamples", "200", "--name", "seeded").output
    assert "Program `memory-vote`" in report and "spend $0.0000" in report
    assert "insufficient data (" in report  # per-family strata are far below the floors here
    data = json.loads((env / "state" / "learn" / "reports" / "seeded.json").read_text())
    assert data["usd"] == 0 and data["cached"] is True and set(data["families"]) >= {"sql_injection"}
    assert data["leave_one_source_out"] == {"source-fixture-pairs": "insufficient data (one source)"}
    assert data["program"]["embedding"] is None  # signals only unless asked
    ouro("learn", "evaluate", "--resamples", "200", "--name", "embedded", "--embed-local")
    embedded = json.loads((env / "state" / "learn" / "reports" / "embedded.json").read_text())
    assert embedded["program"]["embedding"] == "local/hashed-ngrams-v1-256" and embedded["usd"] == 0
    leaks = ouro("learn", "audit-leaks").output
    assert "pairs," in leaks and (env / "state" / "learn" / "reports" / "leaks.json").is_file()
    curve = ouro("learn", "curve", "--size", "20", "--resamples", "50").output
    assert "size    share 0.0" in curve and "memory groups, PR-AUC" in curve and "fit: " in curve


def test_an_unlisted_corpus_is_one_error_line(env: Path) -> None:
    (env / "elsewhere").mkdir()
    full = {**os.environ, "COLUMNS": "200"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ouroboros_gates.ops.cli",
            "learn",
            "labels",
            "--corpus",
            str(env / "elsewhere"),
            "--sources",
            str(env / "sources.toml"),
        ],
        cwd=ROOT,
        env=full,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("ouro: error: ") and "never read" in lines[0]


def _git(root: Path, *args: str) -> None:
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "PATH": os.environ["PATH"],
    }
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)


def test_compile_and_experiment_end_to_end_then_replay(
    env: Path, model_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    model_server.script([{"contains": "Propose", "content": PROPOSALS}, {"content": ANSWER}])
    monkeypatch.setenv("OURO_MODEL", "deepseek-chat")
    monkeypatch.setenv("OURO_MODEL_URL", f"{model_server.url}/v1")
    _labels_and_memory(env)
    specs = env / "specs"
    specs.mkdir()
    spec = specs / "compile.toml"
    spec.write_text(
        "[compile]\nseed = 5\ncompile_share = 0.4\nbootstrap_max = 6\nval_max = 6\nusd_ceiling = 1.0\n"
    )
    _git(specs, "init", "-q")
    with pytest.raises(Exception, match="not committed at HEAD"):
        CliRunner().invoke(app, ["learn", "compile", "--spec", str(spec)], catch_exceptions=False)
    _git(specs, "add", "compile.toml")
    _git(specs, "commit", "-q", "-m", "compile spec")
    compiled = ouro("learn", "compile", "--spec", str(spec), "--profile", "static").output
    sha = compiled.split()[1]
    assert compiled.startswith("compiled ") and "replayed from the cache" in compiled
    assert (
        ouro("learn", "compile", "--spec", str(spec)).output.split()[1] == sha
    )  # from the cache: same bytes
    artifact = env / "state" / "learn" / "programs" / f"{sha}.json"
    # the language-model program's evaluation on the outer folds, paid once, then replayed at $0
    ouro("learn", "evaluate", "--program", str(artifact), "--resamples", "200", "--name", "lm")
    paid = json.loads((env / "state" / "learn" / "reports" / "lm.json").read_text())
    assert paid["program"]["kind"] == "llm-program" and paid["usd"] > 0
    ouro("learn", "evaluate", "--program", str(artifact), "--resamples", "200", "--name", "lm")
    replayed = json.loads((env / "state" / "learn" / "reports" / "lm.json").read_text())
    assert replayed["usd"] == 0 and replayed["cached"] is True and replayed["families"] == paid["families"]
    adopted = ouro("learn", "adopt", sha[:12], "--evaluation", "lm").output
    assert f"adopted {sha}" in adopted
    # an experiment: the compiled program (A) against a variant with another instruction (B)
    repo = env / "exp"
    (repo / "experiments").mkdir(parents=True)
    shutil.copy(artifact, repo / "experiments" / "a.json")
    variant = Program.from_json(json.dumps(json.loads(artifact.read_text())["program"]))
    (repo / "experiments" / "b.json").write_text(
        Program(kind="llm-program", instruction="Answer in JSON only.", demos=variant.demos).to_json()
    )
    digest = json.loads((env / "state" / "learn" / "labels" / "current.json").read_text())["digest"]
    rows = [
        json.loads(line)
        for line in (env / "state" / "learn" / "labels" / f"{digest}.jsonl").read_text().splitlines()
    ]
    units = [{"unit": r["uid"], "group": r["group"]} for r in rows if r["unit"] == "delta"]
    (repo / "experiments" / "exp-k.units.jsonl").write_text("".join(json.dumps(u) + "\n" for u in units))
    manifest = repo / "experiments" / "exp-k.toml"
    manifest.write_text(
        '[experiment]\nid = "exp-k"\nhypothesis = "a shorter instruction answers as well"\n'
        'units_file = "experiments/exp-k.units.jsonl"\nmetric = "correct"\norder = {seed = 2}\n'
        'budget_usd = {total = 1.0, per_arm = 0.5}\n[arms.A]\nprogram = "a.json"\n'
        '[arms.B]\nprogram = "b.json"\n'
    )
    _git(repo, "init", "-q")
    refused = CliRunner().invoke(app, ["experiment", "register", str(manifest)])
    assert refused.exit_code != 0  # nothing committed yet
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "exp-k")
    ouro("experiment", "register", str(manifest))
    out = env / "result"
    first = ouro("experiment", "run", str(manifest), "--out", str(out), "--resamples", "300").output
    assert "decision: " in first and "McNemar exact" in first
    result = json.loads((out / "result.json").read_text())
    assert result["decision"] in ("adopt", "reject", "inconclusive", "equivalent")
    assert result["spend"]["B"] > 0 and len(result["looks"]) == 2
    # again: every response replays from the cache at $0
    ouro("experiment", "run", str(manifest), "--out", str(out), "--resamples", "300")
    again = json.loads((out / "result.json").read_text())
    assert again["spend"] == {"A": 0.0, "B": 0.0} and again["looks"] == result["looks"]
    assert (
        ouro("experiment", "analyse", str(manifest), "--out", str(out), "--resamples", "300").exit_code == 0
    )
    (repo / "experiments" / "exp-k.units.jsonl").write_text(json.dumps(units[0]) + "\n")
    with pytest.raises(Exception, match="changed since registration"):
        CliRunner().invoke(
            app, ["experiment", "run", str(manifest), "--out", str(out)], catch_exceptions=False
        )
