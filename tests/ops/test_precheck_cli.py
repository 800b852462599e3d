"""``ouro precheck`` and ``ouro propose`` as a user runs them: one row per ticket, errors in one line,
proposals from a scripted model posted once with their cost rows, and the census count."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from test_cli import ROOT, ouro

from ouroboros_gates.events import SqlEventStore

EXAMPLES = ROOT / "examples"
FORGE = {"OURO_FORGE": str(EXAMPLES)}
RUNS = sorted(p.name for p in (EXAMPLES / "runs").iterdir())


def test_precheck_prints_one_row_per_mining_ticket(tmp_path: Path, model_server: Any) -> None:
    model = {
        "OURO_MODEL": "local",
        "OURO_MODEL_URL": f"{model_server.url}/v1",
    }  # configured, and never called
    shown = ouro("precheck", state=tmp_path / "state", OURO_ROOTS=str(EXAMPLES), **FORGE, **model)
    assert shown.returncode == 0, shown.stderr
    assert "Pre-check: 4 launch, 3 needs_labels (0 model calls)" in shown.stdout
    rows = [line.split() for line in shown.stdout.splitlines() if line.startswith("#")]
    assert [(r[0], r[-1]) for r in rows] == [
        ("#38", "launch"),
        ("#41", "launch"),
        ("#44", "needs_labels"),
        ("#47", "needs_labels"),
        ("#48", "needs_labels"),
        ("#50", "launch"),
        ("#53", "launch"),
    ]
    assert "#47: the ticket itself" in shown.stdout
    picked = ouro("precheck", "--ticket", "53", "-t", "48", "--json", state=tmp_path / "state", **FORGE)
    lines = [json.loads(line) for line in picked.stdout.splitlines()]
    assert [(r["ticket"], r["verdict"]) for r in lines] == [(53, "launch"), (48, "needs_labels")]
    assert lines[0]["instances_found"] == ["374fdc4", "31eb1b3"]
    assert lines[1]["reason"].startswith("malformed proposal: line 6, field instances:")
    assert model_server.requests == []


def test_precheck_errors_are_one_line(tmp_path: Path) -> None:
    missing = ouro("precheck", "--ticket", "99", state=tmp_path / "state", **FORGE)
    assert missing.returncode == 2 and missing.stderr.startswith("ouro: error: no ticket #99")
    assert len(missing.stderr.strip().splitlines()) == 1
    nowhere = ouro("precheck", state=tmp_path / "state", OURO_FORGE=str(tmp_path))
    assert nowhere.returncode == 2 and "OURO_FORGE:" in nowhere.stderr
    no_model = ouro("propose", state=tmp_path / "state", **FORGE)
    assert no_model.returncode == 2 and "OURO_MODEL: no chat model is configured" in no_model.stderr


def _answers() -> list[dict[str, Any]]:
    def answer(ticket: int, instances: list[str]) -> dict[str, Any]:
        return {
            "ticket": ticket,
            "miner": "sleep-poll",
            "corpus": ["jsonl"],
            "predicate": "polls with `sleep`",
            "facts": [],
            "rules": "",
            "instances": instances,
            "labels": [{"instance": i, "sign": "+"} for i in instances],
        }

    return [
        {"contains": "Ticket #38", "content": {"proposals": [answer(38, [RUNS[5]]), answer(41, [RUNS[5]])]}},
        {"contains": "Ticket #44", "content": {"proposals": [answer(44, [RUNS[0]]), answer(47, [])]}},
        {"contains": "Ticket #48", "content": {"proposals": [answer(48, [RUNS[1]]), answer(50, [RUNS[2]])]}},
        {"contains": "Ticket #53", "content": {"proposals": [answer(53, ["not-a-run"])]}},
    ]


def test_propose_posts_each_proposal_once_with_a_cost_row_per_call(tmp_path: Path, model_server: Any) -> None:
    model_server.script(_answers())
    env = {
        **FORGE,
        "OURO_ROOTS": str(EXAMPLES),
        "OURO_MODEL": "local",
        "OURO_MODEL_URL": f"{model_server.url}/v1",
    }
    state = tmp_path / "state"
    first = ouro("propose", "--batch", "2", state=state, **env)
    assert first.returncode == 0, first.stderr + first.stdout
    assert (
        "4 call(s), 0 replayed from the cache, $0.0000; 7 comment(s) posted: #38, #41, #44, #47, #48, #50, "
        "#53" in (first.stdout)
    )
    assert len(model_server.calls()) == 4
    store = SqlEventStore.from_url(f"sqlite:///{state / 'events.sqlite'}")
    types = [e.type for e in store.read(limit=1000)]
    assert types.count("ProposerCallCompleted") == 4 and types.count("ProposalPosted") == 7
    calls = [e.payload["call"] for e in store.read(limit=1000) if e.type == "ProposerCallCompleted"]
    assert [c["tickets"] for c in calls] == [[38, 41], [44, 47], [48, 50], [53]]
    assert all(c["cache_read_tokens"] > 0 for c in calls[1:])  # the shared prefix is read back from the cache
    # the posted proposals are what the pre-check reads now: #48's new one is well-formed and names a real run
    checked = ouro("precheck", "--json", "-t", "48", "-t", "53", state=state, **env)
    verdicts = [json.loads(line) for line in checked.stdout.splitlines()]
    assert [(v["verdict"], v["instances_found"]) for v in verdicts] == [
        ("launch", [RUNS[1]]),
        ("needs_labels", []),
    ]
    # again: every answer replays from the response cache at $0 and nothing is posted twice
    head = store.head()
    second = ouro("propose", "--batch", "2", state=state, **env)
    assert "0 call(s), 4 replayed from the cache, $0.0000; 0 comment(s) posted: none" in second.stdout
    assert len(model_server.calls()) == 4 and store.head() == head
    costs = ouro("propose", "--costs", state=state, **env)
    summary = costs.stdout.strip().splitlines()[-1]
    assert summary.startswith("4 call(s), 7 ticket(s), at most 2 a call; input ")
    read = sum(c["cache_read_tokens"] for c in calls)
    assert f"cache read {read}," in summary and "; $0.0000;" in summary
    assert len(costs.stdout.strip().splitlines()) == 1 + 4 + 1  # header, one row per call, the sums
    census = ouro("propose", "--census", state=state, **env)
    assert census.returncode == 0, census.stderr
    assert (
        "census: 2 of 7 proposal(s) reach TP > 0 with the template's or a registered extractor"
        in census.stdout
    )
    assert [line.split()[0] for line in census.stdout.splitlines() if " TP 1 " in line] == ["#38", "#41"]
