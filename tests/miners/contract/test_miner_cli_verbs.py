"""The miner CLI as a new user types it: ``ouro miner NAME test`` and ``ouro miner test NAME`` alike,
``--runs`` with
several values, ``findings`` on a knee miner without ``--knee`` (the fitted knee, or why there is none),
``mutate``
judging equivalence on the ITEMs given, ``--json`` on the reports, and a fixture kept as a JSON-array
transcript."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_support import run_ouro

from ouroboros_gates.miners import extract_facts, fixture_items, load_miner, miner_test, new_miner

REPO = Path(__file__).resolve().parents[3]
FIXTURES = "miners/_template/fixtures/*/events.jsonl"
LABELS = "miners/_template/fixtures/labels.tsv"
RUN = "6c1f2a10-3b7e-4d6a-9e51-0a1b2c3d4e"


Runner = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Runner:
    """``run(*argv)``: ``ouro ARGV`` in-process from the repository root, with no extra miner directories."""
    monkeypatch.delenv("OURO_MINERS_PATH", raising=False)
    return lambda *argv: run_ouro(monkeypatch, capsys, *argv, cwd=REPO)


def test_test_is_a_verb_of_the_miner_too(run: Runner) -> None:
    verb_first, name_first = run("miner", "test", "_template"), run("miner", "_template", "test")
    assert verb_first == name_first and verb_first[0] == 0
    assert verb_first[1].splitlines()[-1] == "draft-pr-late: 12 checks passed"
    status, out, _err = run("miner", "draft-pr-late", "test", "--json")
    report = json.loads(out)
    assert status == 0 and report["passed"] is True and len(report["checks"]) == 12
    assert report["checks"][0] == {
        "check": "check_rules",
        "passed": True,
        "detail": "1 rule(s), safe and stratified",
    }


def test_runs_takes_several_values(run: Runner) -> None:
    runs = sorted(str(path) for path in (REPO / "examples" / "runs").glob("*/events.jsonl"))[:3]
    several = run("miner", "test", "_template", "--runs", *runs)
    repeated = run("miner", "_template", "test", *(word for path in runs for word in ("--runs", path)))
    assert several == repeated and several[0] == 0
    assert "and 3 corpus run(s)" in several[1]
    status, _out, err = run("miner", "test", "_template", runs[0])
    assert status == 2 and err == f"ouro: error: {runs[0]}: an ITEM goes after --runs (`--runs ITEM…`)\n"


def test_findings_without_a_knee_use_the_fitted_one(run: Runner) -> None:
    fitted = run("miner", "_template", "findings", FIXTURES)
    given = run("miner", "_template", "findings", "--knee", "468", FIXTURES)
    assert fitted[:2] == given[:2] and len(fitted[1].splitlines()) == 2
    assert fitted[2] == "knee: κ* = 468 (fitted on draft-pr-late's fixtures; --knee K sets another)\n"
    floor = run("miner", "cache-floor", "findings", "miners/cache_floor/fixtures/*/events.jsonl")
    assert floor[0] == 0 and floor[2] == "" and len(floor[1].splitlines()) == 4  # its rule reads no knee


def _labelled(folder: Path) -> Path:
    """A new miner with the template's fixtures and labels."""
    shutil.copytree(REPO / "miners" / "_template" / "fixtures", folder / "fixtures", dirs_exist_ok=True)
    return folder


def test_findings_say_why_a_knee_miner_has_no_knee(
    run: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OURO_MINERS_PATH", str(tmp_path))
    new_miner("unlabelled", tmp_path)
    status, out, err = run("miner", "unlabelled", "findings", FIXTURES)
    assert (status, out) == (2, "")
    assert err.startswith("ouro: error: --knee: unlabelled has no fitted knee (no labels")
    folder = _labelled(new_miner("no_scores", tmp_path))
    for fixture in (folder / "fixtures").glob("*/events.jsonl"):
        fixture.write_text("{}\n")  # runs without a timestamp: no score facts to fit a knee from
    status, out, err = run("miner", "no_scores", "findings", FIXTURES)
    assert (status, out) == (2, "")
    assert err == (
        "ouro: error: --knee: no-scores has no fitted knee (no `score` facts in its fixtures); give --knee "
        "K\n"
    )


def test_mutate_judges_equivalence_on_the_items_given(run: Runner) -> None:
    status, out, _err = run("miner", "_template", "mutate", LABELS, FIXTURES)
    assert status == 0 and "no corpus" not in out
    assert (
        f"| Equivalence judged on | the 3 run(s) the checks read and 3 corpus run(s): {RUN}31, {RUN}47" in out
    )


def test_list_prints_json(run: Runner) -> None:
    status, out, _err = run("miner", "list", "--json")
    names = {miner["name"]: miner for miner in json.loads(out)["miners"]}
    assert (
        status == 0
        and names["cache-floor"]["gate"] == "warn"
        and names["self-match"]["verdicts"] == ["self_match"]
    )


def test_a_json_array_transcript_is_a_fixture_as_it_is(tmp_path: Path) -> None:
    folder = _labelled(new_miner("array_fixtures", tmp_path))
    for fixture in (folder / "fixtures").glob("*/events.jsonl"):
        lines = [json.loads(line) for line in fixture.read_text().splitlines() if line.strip()]
        fixture.unlink()
        (fixture.parent / "transcript.json").write_text(
            json.dumps(lines, indent=2)
        )  # as an exporter writes it
    report = miner_test(load_miner(folder, "test"), write=True)
    assert report.passed, "\n".join(report.lines())
    miner = load_miner(folder, "test")
    extracted = extract_facts(miner, fixture_items(miner.fixtures))
    assert sorted(extracted.instances) == [f"{RUN}31", f"{RUN}47", f"{RUN}60"]  # named by their folders
    spans = {fact.span.file for facts in extracted.facts.values() for fact in facts if fact.span}
    assert spans and all(span.endswith("/transcript.json") for span in spans)
    assert f"| Backtest TP | 1: {RUN}60 |" in (folder / "backtest.md").read_text()


def test_a_file_of_no_known_format_is_named_and_the_exit_status_says_so(run: Runner) -> None:
    agents = str(REPO / "tests" / "harness" / "agents")
    status, out, err = run("miner", "sleep-poll", "facts", agents)
    assert status == 1 and '"fix-greeting"' in out  # the rest is still read and printed
    assert err.startswith(
        f"ouro: {agents}/notes.json: not read: no object in a known format (its first has items"
    )
