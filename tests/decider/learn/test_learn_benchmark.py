"""``ouro learn evaluate --benchmark DIR --expected CSV`` on hand-written servlets in the benchmark's shape,
bad expected-results rows, and (where the shared corpora are present) a bounded slice of the real one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ouroboros_gates.decider.assemble import packaged_program
from ouroboros_gates.decider.learn.benchmark import (
    analyse_cases,
    evaluate_benchmark,
    load_cases,
    render_benchmark,
)
from ouroboros_gates.ops.cli import app
from ouroboros_gates.schemas.errors import OuroError

_SQL = """package bench;

public class {name} extends HttpServlet {{
    public void doPost(HttpServletRequest request, HttpServletResponse response) throws IOException {{
        String param = request.getParameter("{name}");
        String bar;
        int num = {num};
        if ((7 * 42) - num > 200) bar = "This_should_always_happen";
        else bar = param;
        String sql = "SELECT * from USERS where USERNAME='foo' and PASSWORD='" + bar + "'";
        java.sql.Statement statement = DatabaseHelper.getSqlStatement();
        statement.execute(sql);
        response.getWriter().println("done {i}");
    }}
}}
"""
_HASH = """package bench;

public class {name} extends HttpServlet {{
    public void doPost(HttpServletRequest request, HttpServletResponse response) throws IOException {{
        String param = request.getParameter("{name}");
        java.security.MessageDigest md = java.security.MessageDigest.getInstance("{algorithm}");
        md.update(param.getBytes());
        byte[] result = md.digest();
        response.getWriter().println("hashed {i}: " + result.length);
    }}
}}
"""


def _benchmark(root: Path, per_cell: int = 12) -> tuple[Path, Path]:
    """Cases of two families, half vulnerable: SQL built from a parameter a constant condition may or may not
    keep out (every case has the concatenation a quick rule flags), and a weak or a strong hash."""
    code = root / "testcode"
    code.mkdir(parents=True)
    rows = ["# test name, category, real vulnerability, cwe"]
    n = 0
    for i in range(per_cell):
        for y in (1, 0):
            n += 1
            name = f"BenchmarkTest{n:05d}"
            (code / f"{name}.java").write_text(_SQL.format(name=name, num=106 if y else 86, i=i))
            rows.append(f"{name},sqli,{'true' if y else 'false'},89")
            n += 1
            name = f"BenchmarkTest{n:05d}"
            (code / f"{name}.java").write_text(
                _HASH.format(name=name, algorithm="MD5" if y else "SHA-256", i=i)
            )
            rows.append(f"{name},hash,{'true' if y else 'false'},328")
    expected = root / "expectedresults.csv"
    expected.write_text("\n".join(rows) + "\n")
    return code, expected


def test_the_decider_and_its_instruments_on_the_same_cases(tmp_path: Path) -> None:
    code, expected = _benchmark(tmp_path)
    cases = load_cases(code, expected)
    assert len(cases) == 48 and {c.family for c in cases} == {"sql_injection", "weak_crypto"}
    analysed, skipped = analyse_cases(cases, code)
    assert skipped == []
    program = packaged_program("memory-vote")
    assert program is not None
    result = evaluate_benchmark(cases, analysed, program, resamples=200)
    overall = result["overall"]
    assert overall["cases"] == 48 and overall["positive"] == 24
    # every case has a signal of its family (the SQL concatenation, the digest call): the instruments alone
    # flag every SQL case; the taint step sees which constant condition keeps the parameter out
    sql = result["by_family"]["sql_injection"]
    assert sql["instruments"]["fpr"]["value"] == 1.0 and sql["taint_or_rule"]["fpr"]["value"] == 0.0
    assert overall["decider"]["j"]["value"] > overall["instruments"]["j"]["value"]
    assert (
        overall["decider"]["tpr"]["low"]
        <= overall["decider"]["tpr"]["value"]
        <= overall["decider"]["tpr"]["high"]
    )
    assert overall["j_difference"]["value"] > 0
    assert len(result["thresholds"]) == 5 and "bandit_any" not in overall  # no Python case: no Bandit row
    text = render_benchmark(result)
    assert "| overall | 48 (24/24) | decider |" in text and "J difference (decider - instruments)" in text


def test_the_command_writes_its_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, expected = _benchmark(tmp_path / "bench", per_cell=6)
    monkeypatch.setenv("OURO_STATE", str(tmp_path / "state"))
    result = CliRunner().invoke(
        app,
        [
            "learn",
            "evaluate",
            "--benchmark",
            str(code),
            "--expected",
            str(expected),
            "--resamples",
            "100",
            "--name",
            "fixture",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "state" / "learn" / "reports" / "fixture.json").read_text())
    assert report["overall"]["cases"] == 24 and report["seconds"]["total"] >= report["seconds"]["analyse"]
    assert "| overall | 24 (12/12) | instruments |" in result.output
    alone = CliRunner().invoke(app, ["learn", "evaluate", "--benchmark", str(code)])
    assert isinstance(alone.exception, OuroError) and "go together" in str(alone.exception)


def test_the_benchmark_becomes_memory_in_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ouroboros_gates.decider.memory import MemoryStore
    from ouroboros_gates.events import SideTables, make_engine

    code, expected = _benchmark(tmp_path / "bench", per_cell=3)
    monkeypatch.setenv("OURO_STATE", str(tmp_path / "state"))
    monkeypatch.delenv("OURO_DATABASE_URL", raising=False)
    args = ["learn", "memory", "build", "--benchmark", str(code), "--expected", str(expected)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    # every SQL case has a candidate; a strong hash raises no signal, so its case has no example
    assert "9 examples (6 vulnerable) from 12 cases" in result.output and "stored: 9 new" in result.output
    stored = MemoryStore(SideTables(make_engine(f"sqlite:///{tmp_path / 'state' / 'events.sqlite'}"))).load(
        "static"
    )
    assert len(stored) == 9 and len({e.group for e in stored.examples}) == 9
    assert {e.family for e in stored.examples} == {"sql_injection", "weak_crypto"}
    again = CliRunner().invoke(app, args)
    assert "stored: 0 new" in again.output  # idempotent by example id


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("BenchmarkTest00001,sqli,maybe,89", r"expectedresults\.csv:2: real vulnerability 'maybe'"),
        ("BenchmarkTest00001,sqli,true,99999", r"expectedresults\.csv:2: CWE 99999 maps to no family"),
        (
            "BenchmarkTest99999,sqli,true,89",
            r"expectedresults\.csv:2: no source file named BenchmarkTest99999",
        ),
        ("BenchmarkTest00001,sqli", r"expectedresults\.csv:2: expected name, category, real, cwe"),
    ],
)
def test_a_bad_row_names_file_and_line(tmp_path: Path, row: str, message: str) -> None:
    code, expected = _benchmark(tmp_path, per_cell=1)
    expected.write_text(f"# header\n{row}\n")
    with pytest.raises(OuroError, match=message):
        load_cases(code, expected)


def test_a_bounded_slice_of_the_owasp_benchmark(shared_corpora: Path) -> None:
    """The first 400 cases of the real benchmark (all 11 categories): the decider at $0 on folds it did not
    see beats its instruments alone and reaches J >= 0.5 (the whole run is in the README)."""
    root = shared_corpora / "vuln" / "owasp_benchmark_java"
    if not (root / "testcode").is_dir():
        pytest.skip("the OWASP Benchmark is not in ../shared/corpora")
    cases = load_cases(root / "testcode", root / "expectedresults-1.2.csv")[:400]
    assert len({c.category for c in cases}) == 11
    analysed, skipped = analyse_cases(cases, root / "testcode")
    assert skipped == []
    program = packaged_program("memory-vote")
    assert program is not None
    overall = evaluate_benchmark(cases, analysed, program, resamples=200)["overall"]
    assert overall["decider"]["j"]["value"] >= 0.5
    assert overall["j_difference"]["low"] > 0, overall
