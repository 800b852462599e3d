"""One h_r: ``ouro measure h-fleet``, the ``cache-floor`` miner and the ops page's snapshot compute each run's
prompt-cache ratio the same way on every format, and so agree run by run on the development corpora (real
Claude Code transcripts with subagents, stream-json, hook logs, SWE-agent trajectories), and on a run of our
own whose stream-json process was killed before its result line."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ouroboros_gates.events import utcnow
from ouroboros_gates.harness import expand, read, summarise
from ouroboros_gates.miners import corpus_items, extract_facts, find, find_miner
from ouroboros_gates.ops.cli import app
from ouroboros_gates.schemas import RunRecorded
from ouroboros_gates.workers.measurer import FLOOR, build_snapshot, fold, measure, read_h_fleet_runs


def _three_ways(paths: list[Path]) -> tuple[dict[str, object], dict[str, object], dict[str, object]]:
    """Per run: h-fleet's (read, prompt), cache-floor's basis points, the page's (read, prompt); and the
    runs each ranks below the floor."""
    runs = expand(paths)
    fleet = {
        r.run: (r.cache_read, r.prompt_tokens)
        for r in read_h_fleet_runs([(r.name, r.files) for r in runs]).runs
    }
    miner = find_miner("cache-floor")
    extracted = extract_facts(miner, corpus_items(paths))
    basis = {fact.args[0].text: fact.args[1].number for facts in extracted.facts.values() for fact in facts}  # type: ignore[union-attr]
    flagged = {finding.subject[0].text for finding in find(miner, miner.rules(), extracted, None)}  # type: ignore[union-attr]
    now = utcnow()
    recorded = [
        (
            now,
            RunRecorded(
                run=run.name, path=str(run.path), summary=summarise(read(run.path, run.name)), digest="0" * 64
            ),
        )
        for run in runs
    ]
    inp = fold(recorded, now)
    snapshot = build_snapshot(measure(inp), inp)
    page = {r.run: (r.cache_read, r.prompt_tokens) for r in inp.runs}
    below = {row["run"] for row in snapshot["h_fleet"]["offenders"]}
    return (
        {"fleet": fleet, "below": below},
        {"basis": basis, "below": flagged},
        {"page": page, "below": below},
    )


def _ratio(read: float, prompt: float) -> float | None:
    return read / prompt if prompt else None


def test_h_fleet_cache_floor_and_the_page_agree_on_the_development_corpora(agent_logs: Path) -> None:
    fleet, floor, page = _three_ways([agent_logs])
    assert fleet["fleet"] == {run: (float(r), float(p)) for run, (r, p) in page["page"].items()}  # type: ignore[union-attr]
    measured = {run: _ratio(*pair) for run, pair in page["page"].items()}  # type: ignore[union-attr]
    assert floor["basis"] == {run: int(10000 * r) // p for run, (r, p) in page["page"].items() if p}  # type: ignore[union-attr]
    below = {run for run, h in measured.items() if h is not None and h < FLOOR}
    assert floor["below"] == page["below"] == below
    # The real sessions below the floor, SWE-agent's runs (no cache counts) with no h_r anywhere.
    assert {"ae4a77f8-aedd-4bc1-888f-c94edc91af04", "golden"} <= below
    swe = [run for run in measured if run.startswith(("gpt4__", "demo__"))]
    assert swe and all(measured[run] is None and run not in floor["basis"] for run in swe)


def test_a_killed_stream_json_run_has_no_h_r_and_says_so(tmp_path: Path) -> None:
    usage = {"input_tokens": 4, "cache_creation_input_tokens": 10, "cache_read_input_tokens": 986}
    assistant = {
        "type": "assistant",
        "session_id": "k",
        "message": {"id": "m", "role": "assistant", "usage": usage},
    }
    killed = tmp_path / "killed.ndjson"
    killed.write_text(
        json.dumps({"type": "system", "subtype": "init", "session_id": "k"})
        + "\n"
        + json.dumps(assistant)
        + "\n"
    )
    finished = tmp_path / "finished.ndjson"
    finished.write_text(json.dumps({"type": "result", "session_id": "f", "usage": usage}) + "\n")
    result = CliRunner().invoke(app, ["measure", "h-fleet", "--json", str(killed), str(finished)])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["per_run"] == [
        {"run": "killed", "h_r": None, "cache_read": 0.0, "prompt_tokens": 0.0},
        {"run": "finished", "h_r": 0.986, "cache_read": 986.0, "prompt_tokens": 1000.0},
    ]
    assert doc["notes"] == [
        f"killed: no result line in {killed} (a process killed before its result, or no usage "
        "reported): no h_r"
    ]
    _fleet, floor, page = _three_ways([killed, finished])
    assert floor["basis"] == {"finished": 9860} and floor["below"] == page["below"] == {"finished"}
