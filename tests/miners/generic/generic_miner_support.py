"""What the generic miners' tests share: the sample corpus, the miner test, findings by run, and runs
written in the real CSF envelope format for the negative controls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ouroboros_gates.miners import (
    Miner,
    MinerTestReport,
    corpus_items,
    extract_facts,
    find,
    find_miner,
    miner_test,
)
from ouroboros_gates.miners.datalog import Value
from ouroboros_gates.schemas import Finding, Text

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = str(REPO / "examples" / "runs" / "*" / "events.jsonl")
CHECKS = [
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
]


def installed(folder: str) -> Miner:
    """The installed miner in ``miners/<folder>`` (``OURO_MINERS_PATH`` left out)."""
    return find_miner(folder, extra="")


def passing(miner: Miner) -> MinerTestReport:
    """The miner test's report, asserted to pass every check, in order."""
    report = miner_test(miner)
    assert report.passed, "\n".join(report.lines())
    checks = (
        [*CHECKS[:6], "local_facts", *CHECKS[6:]] if miner.local else CHECKS
    )  # a LOCAL miner's claim checked
    assert [check.name for check in report.checks] == checks
    assert report.lines()[-1] == f"{miner.name}: {len(checks)} checks passed"
    return report


def fitted_knee(miner: Miner) -> int:
    """The count knee the miner's backtest fitted, with the test passing, FN = 0 and every mutant killed."""
    report = passing(miner)
    assert report.backtest is not None and report.backtest.counts.fn == ()
    assert report.mutation is not None and report.mutation.report.score == 1.0
    assert isinstance(report.backtest.kappa_star, int)
    return report.backtest.kappa_star


def findings(miner: Miner, pattern: str | Path, knee: Value | None) -> dict[str, list[Finding]]:
    """The miner's findings over the runs ``pattern`` names, at ``knee``, by the run each names first."""
    extracted = extract_facts(miner, corpus_items([str(pattern)]))
    by_run: dict[str, list[Finding]] = {}
    for finding in find(miner, miner.rules(), extracted, knee):
        run = finding.subject[0]
        assert isinstance(run, Text)
        by_run.setdefault(run.text, []).append(finding)
    return by_run


def envelope(ts: str, event: dict[str, Any]) -> str:
    """One CSF envelope line around a Claude Code stream-json line."""
    return json.dumps({"ts": ts, "event_type": event["type"], "event": event})


def tool_use(run: str, call: str, tool: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    """A stream-json ``assistant`` line carrying one ``tool_use`` block."""
    block = {"type": "tool_use", "id": call, "name": tool, "input": tool_input}
    message = {
        "model": "claude-opus-4-5-20251101",
        "id": f"msg_{call}",
        "type": "message",
        "role": "assistant",
    }
    return {"type": "assistant", "message": {**message, "content": [block]}, "session_id": run}


def tool_result(run: str, call: str, content: str, is_error: bool = False) -> dict[str, Any]:
    """A stream-json ``user`` line carrying one ``tool_result`` block."""
    block = {"tool_use_id": call, "type": "tool_result", "content": content, "is_error": is_error}
    return {"type": "user", "message": {"role": "user", "content": [block]}, "session_id": run}


def result(run: str, usage: dict[str, int]) -> dict[str, Any]:
    """A stream-json ``result`` line with its usage."""
    return {"type": "result", "subtype": "success", "is_error": False, "session_id": run, "usage": usage}


def write_run(root: Path, run: str, events: list[dict[str, Any]]) -> Path:
    """``root/<run>/events.jsonl`` holding ``events``, one envelope a minute from 10:00."""
    folder = root / run
    folder.mkdir(parents=True)
    lines = [envelope(f"2026-10-07T10:{minute:02d}:00Z", event) for minute, event in enumerate(events)]
    (folder / "events.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder / "events.jsonl"


def bash_calls(run: str, commands: list[str]) -> list[dict[str, Any]]:
    """One ``assistant`` line per command, each a Bash ``tool_use`` (ids ``toolu_0``, ``toolu_1``, …)."""
    return [tool_use(run, f"toolu_{n}", "Bash", {"command": command}) for n, command in enumerate(commands)]
