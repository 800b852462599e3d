"""Reports: SARIF 2.1.0 valid against the OASIS schema with ``properties.decision``, findings.json's
``decision`` fields, dropped_by_engine.json, manifest.json and the markdown."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import jsonschema
from _decider_support import COLUMNS, item, memory

from ouroboros_gates import __version__
from ouroboros_gates.decider.decide import Engine, Run, decide_all
from ouroboros_gates.decider.instruments.taint import Flow
from ouroboros_gates.decider.program import OperatingPoint, Program
from ouroboros_gates.decider.report import compact_lines, manifest, write_reports

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())
DECISION_KEYS = {
    "p",
    "operating_point",
    "program_id",
    "verdict",
    "rationale",
    "cited_lines",
    "signals",
    "offered",
}


def run() -> Run:
    vote = Program(kind="memory-vote", operating_points={"*": OperatingPoint(advisory=0.5)})
    return decide_all([item("search", hits=1), item("safe", hits=0)], Engine(vote, memory(), COLUMNS))


def test_reports_are_written_and_sarif_is_valid(tmp_path: Path) -> None:
    r = run()
    meta = manifest(
        r, repo="acme/shop", head="b" * 40, base=None, program_source="packaged", note="memory-vote"
    )
    files = write_reports(r, tmp_path, meta, "memory-vote program (no chat model configured)")
    sarif = json.loads(files["findings.sarif"].read_text())
    jsonschema.Draft4Validator(SCHEMA).validate(sarif)
    (result,) = sarif["runs"][0]["results"]
    assert result["level"] == "warning" and result["ruleId"] == "sql_injection"
    assert set(result["properties"]["decision"]) >= DECISION_KEYS
    assert (
        result["locations"][0]["physicalLocation"]["region"]["startLine"] == 11
    )  # the signal's line, not the def
    findings = json.loads(files["findings.json"].read_text())
    dropped = json.loads(files["dropped_by_engine.json"].read_text())
    assert [f["function"] for f in findings] == ["search"] and [f["function"] for f in dropped] == ["safe"]
    assert (
        set(findings[0]["decision"]) >= DECISION_KEYS
        and findings[0]["decision"]["operating_point"] == "advisory"
    )
    written = json.loads(files["manifest.json"].read_text())["decision"]
    assert written["program_id"] == r.program_id and written["usd"] == 0 and written["fallback"] is False
    md = files["findings.md"].read_text()
    assert "| ADVISORY |" in md and "1 candidate(s) dropped" in md
    assert "<details><summary>Dropped candidates, each with why</summary>" in md and "| DROP |" in md


def test_sarif_carries_the_sink_line_the_flow_rule_help_severity_and_failed_instruments(
    tmp_path: Path,
) -> None:
    vote = Program(kind="memory-vote", operating_points={"*": OperatingPoint(advisory=0.5)})
    source = Flow(
        "search", "sql", "sql.dbapi", 12, "db.execute", "request", 10, source="request.args", steps=(11,)
    )
    live = replace(item("search", hits=0), flows=(source,))
    r = decide_all([live], Engine(vote, memory(), COLUMNS))
    meta = manifest(r, repo="acme/shop", head="b" * 40, base=None, program_source="packaged", note="")
    failures = {"bandit": ["a.py", "b.py"]}
    files = write_reports(r, tmp_path, meta, "", failures)
    sarif = json.loads(files["findings.sarif"].read_text())
    jsonschema.Draft4Validator(SCHEMA).validate(sarif)
    driver = sarif["runs"][0]["tool"]["driver"]
    assert driver["version"] == __version__ and driver["informationUri"].startswith("https://")
    (rule,) = driver["rules"]
    assert rule["properties"]["security-severity"] == "8.8" and rule["properties"]["tags"] == [
        "security",
        "external/cwe/cwe-89",
    ]
    assert rule["help"]["text"] and rule["fullDescription"]["text"].startswith("SQL injection (CWE-89)")
    (result,) = sarif["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": 12}
    steps = result["codeFlows"][0]["threadFlows"][0]["locations"]
    assert [s["location"]["physicalLocation"]["region"]["startLine"] for s in steps] == [10, 11, 12]
    assert steps[0]["location"]["message"]["text"] == "source: request.args"
    (note,) = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert note["descriptor"]["id"] == "bandit" and "failed on 2 file(s)" in note["message"]["text"]
    assert "**instrument failed: bandit on 2 file(s)" in files["findings.md"].read_text()


def test_an_invalid_sarif_is_caught_by_the_schema() -> None:
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {}}, "results": []}]}
    try:
        jsonschema.Draft4Validator(SCHEMA).validate(bad)
    except jsonschema.ValidationError as exc:
        assert "name" in exc.message
    else:
        raise AssertionError("a driver without a name passed the schema")


def test_the_fallback_line_is_in_the_compact_report() -> None:
    r = decide_all([item("a")], Engine(None, memory(), COLUMNS))
    lines = compact_lines(r)
    assert any(line.startswith("decision engine: not used (no adopted program)") for line in lines)
    assert lines[0].startswith("ADVISORY")
