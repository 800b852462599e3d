"""The template miner, DRAFT-PR-LATE: its own test passes, it reproduces the worked example (docs/loop.md),
and its measured mutation score is the floor (``TEMPLATE_FLOOR`` moves only when this measurement does)."""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import datetime
from pathlib import Path

import pytest

from ouroboros_gates.miners import (
    TEMPLATE_FLOOR,
    Miner,
    backtest,
    corpus_items,
    extract_facts,
    find,
    find_miner,
    miner_test,
    mutate,
    read_labels,
)
from ouroboros_gates.miners.checks import KNEE_BINDS
from ouroboros_gates.schemas import MutantOutcome, Number, Text

REPO = Path(__file__).resolve().parents[3]
RUN = "6c1f2a10-3b7e-4d6a-9e51-0a1b2c3d4e"


@pytest.fixture(scope="module")
def template() -> Miner:
    return find_miner("_template", extra="")


def test_the_miner_test_passes(template: Miner) -> None:
    report = miner_test(template)
    assert report.passed, "\n".join(report.lines())
    assert [c.name for c in report.checks] == [
        "check_rules",
        "verdicts_defined",
        "fixtures_labelled",
        "backtest_fn",
        "fixtures_match_labels",
        "knee_binds",
        "mutation_gate",
        "backtest_md",
        "mutation_md",
        "readme_block",
        "readme",
        "template_floor",
    ]
    assert report.lines()[-1] == "draft-pr-late: 12 checks passed"


def test_the_floor_is_the_templates_measured_score(template: Miner) -> None:
    extracted = extract_facts(template, corpus_items([template.fixture_glob]))
    result = mutate(
        template.name,
        template.rules().program,
        template.verdicts,
        read_labels(template.labels_path),
        extracted,
    )
    assert result.report.score == TEMPLATE_FLOOR
    constant = [r for r in result.report.mutants if r.description.endswith("`gt(S, K)` -> `gt(S, 468)`")]
    assert [r.killed_by for r in constant] == [(KNEE_BINDS,)]
    counts = {o: sum(r.outcome is o for r in result.report.mutants) for o in MutantOutcome}
    assert counts == {
        MutantOutcome.KILLED: 8,
        MutantOutcome.SURVIVED: 0,
        MutantOutcome.REFUSED: 4,
        MutantOutcome.EQUIVALENT: 1,
    }


def test_the_seeds_worked_example(template: Miner) -> None:
    extracted = extract_facts(template, corpus_items([template.fixture_glob]))
    scores = {
        i: next(f.args[1] for f in facts if f.predicate == "score") for i, facts in extracted.facts.items()
    }
    assert scores == {
        RUN + "31": Number(number=3089),
        RUN + "47": Number(number=468),
        RUN + "60": Number(number=1259),
    }
    result = backtest(
        template.name, template.rules(), template.verdicts, read_labels(template.labels_path), extracted
    )
    rows = dict(result.rows())
    assert rows["Backtest split $t$"].startswith("2026-10-02T18:04:45Z ")
    assert rows["Backtest families"] == "3 ($K$ = {468, 1259, 3089})"
    assert (
        rows["Backtest $\\kappa^\\star$"]
        == "468 (argmax precision on $\\Lambda_{\\le t}$ s.t. FN = 0; 3 candidates from `score`)"
    )
    assert rows["Backtest TP"] == f"1: {RUN}60" and rows["Backtest FP"] == "0" and rows["Backtest FN"] == "0"
    assert rows["Backtest lead"] == f"304 s: {RUN}60"
    findings = find(template, template.rules(), extracted, 468)
    assert [f.subject for f in findings] == [(Text(text=RUN + "31"),), (Text(text=RUN + "60"),)]
    proof = findings[1].proof
    assert [(p.predicate, p.span.line if p.span else None) for p in proof] == [
        ("gated", 1),
        ("score", 4),
        ("knee", None),
    ]


def test_a_failed_draft_does_not_count_and_the_first_success_ends_the_score(template: Miner) -> None:
    extracted = extract_facts(template, corpus_items([template.fixture_glob]))
    late = {f.predicate: f for f in extracted.facts[RUN + "60"]}
    assert late["score"].span is not None and late["score"].span.line == 4  # the last line: the draft failed
    early = {f.predicate: f for f in extracted.facts[RUN + "47"]}
    assert early["score"].span is not None and early["score"].span.line == 3  # the successful draft's result


def test_the_sample_corpus(template: Miner) -> None:
    extracted = extract_facts(
        template, corpus_items([str(REPO / "examples" / "runs" / "*" / "events.jsonl")])
    )
    result = backtest(
        template.name,
        template.rules(),
        template.verdicts,
        read_labels(REPO / "examples" / "labels.tsv"),
        extracted,
    )
    assert result.kappa_star == 610 and result.counts.fp == () and result.counts.fn == ()
    assert sorted(result.lead.values()) == [410.0, 680.0] and result.pbo.status == "computed"


def _line(moment: str, kind: str = "user", **extra: object) -> str:
    return json.dumps(
        {
            "type": kind,
            "sessionId": "s1",
            "uuid": moment,
            "timestamp": moment,
            "message": {"role": kind, "content": "x"},
            **extra,
        }
    )


def test_a_session_lasts_from_its_first_to_its_last_timestamp_over_all_of_its_files(
    template: Miner, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    (project / "s1" / "subagents").mkdir(parents=True)
    # The main transcript, read first, ends last; its subagent, read last, starts and ends in between; and a
    # line out of order in the main file does not end the session.
    main = ["2026-03-01T10:00:00Z", "2026-03-01T11:10:00Z", "2026-03-01T10:30:00Z"]
    (project / "s1.jsonl").write_text("".join(_line(moment) + "\n" for moment in main))
    side = ["2026-03-01T10:05:00Z", "2026-03-01T10:20:00Z"]
    (project / "s1" / "subagents" / "agent-a1.jsonl").write_text(
        "".join(_line(moment, isSidechain=True, agentId="a1") + "\n" for moment in side)
    )
    [facts] = extract_facts(template, corpus_items([project])).facts.values()
    score = next(fact for fact in facts if fact.predicate == "score")
    assert score.args[1] == Number(number=70 * 60) and score.span is not None and score.span.line == 2


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed: the independent count is jq's")
def test_real_sessions_last_from_first_to_last_timestamp(template: Miner, agent_logs: Path) -> None:
    items = corpus_items([agent_logs / "claude_code_projects", agent_logs / "claude_code_transcripts"])
    scores = {
        instance: next(f.args[1].number for f in facts if f.predicate == "score")  # type: ignore[union-attr]
        for instance, facts in extract_facts(template, items).facts.items()
    }
    program = (
        "[inputs | .timestamp? // empty | strings] | (max, min)"  # every line's, over all the session's files
    )
    for item in items:
        argv = ["jq", "-n", "-r", program, *map(str, item.files)]
        latest, earliest = subprocess.run(argv, capture_output=True, text=True, check=True).stdout.split()
        assert scores[item.instance] == pytest.approx(_seconds(latest, earliest)), item.instance
    assert len(items) == 4
    assert scores["ae4a77f8-aedd-4bc1-888f-c94edc91af04"] == 3184.627  # main, subagent and compaction files


def _seconds(latest: str, earliest: str) -> float:
    return (
        datetime.fromisoformat(latest.replace("Z", "+00:00"))
        - datetime.fromisoformat(earliest.replace("Z", "+00:00"))
    ).total_seconds()
