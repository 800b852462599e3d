"""``ouro datalog run`` for analysis authors: Soufflé's ``.output``/``.input`` directives and ``--output``,
JSON lines with or without proofs, TSV and CSV files in ``--out DIR``; ``ouro datalog explain``: an atom's
proof tree, or the literal that fails its nearest candidate binding."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_support import run_ouro

from ouroboros_gates.miners import input_fact, read_fact_lines
from ouroboros_gates.miners.facts import read_input_facts

Runner = Callable[..., tuple[int, str, str]]

RULES = """\
/* predicate
   path(X, Y): a path of edges leads from X to Y.
   far(X): X reaches something two edges away or more. */
.decl edge(a: symbol, b: symbol)
.decl blocked(a: symbol)
.input edge, blocked
.output path
path(X, Y) :- edge(X, Y), !blocked(X).
path(X, Z) :- path(X, Y), edge(Y, Z).
far(X) :- path(X, Y), path(Y, _).
"""


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Runner:
    return lambda *argv: run_ouro(monkeypatch, capsys, *argv)


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    rules, facts = tmp_path / "path.dl", tmp_path / "edges.jsonl"
    rules.write_text(RULES)
    edges = [("a", "b"), ("b", "c"), ("c", "tab\there"), ("x", 'a,"q"')]
    facts.write_text("".join(json.dumps({"predicate": "edge", "args": list(e)}) + "\n" for e in edges))
    return str(rules), str(facts)


def test_the_output_directive_chooses_the_relation_and_output_overrides_it(
    run: Runner, files: tuple[str, str], tmp_path: Path
) -> None:
    status, out, err = run("datalog", "run", *files, "--no-proofs")
    lines = [json.loads(line) for line in out.splitlines()]
    assert (status, err) == (0, "") and {line["predicate"] for line in lines} == {
        "path"
    }  # not far: .output path
    assert all(set(line) == {"predicate", "args"} for line in lines) and len(lines) == 7
    status, out, _err = run("datalog", "run", *files, "--output", "far", "--output", "edge", "--no-proofs")
    assert [json.loads(line)["predicate"] for line in out.splitlines()] == ["far"] * 2 + ["edge"] * 4
    status, _out, err = run("datalog", "run", *files, "--output", "paht")
    assert status == 2 and f"--output paht: no predicate paht in {files[0]} or the facts" in err
    status, out, _err = run("datalog", "run", *files, "--output", "blocked")
    assert (status, out) == (0, "")  # an .input with no facts is empty, not an error


def test_tsv_and_csv_files_one_per_relation(run: Runner, files: tuple[str, str], tmp_path: Path) -> None:
    out = tmp_path / "out"
    status, _out, err = run(
        "datalog", "run", *files, "--output", "path", "--output", "edge", "--format", "tsv", "--out", str(out)
    )
    assert (status, err) == (0, "") and sorted(p.name for p in out.iterdir()) == ["edge.tsv", "path.tsv"]
    rows = (out / "edge.tsv").read_text().splitlines()
    assert rows == ["a\tb", "b\tc", "c\ttab\\there", 'x\ta,"q"']  # a tab in a value is escaped
    assert len((out / "path.tsv").read_text().splitlines()) == 7
    status, _out, _err = run(
        "datalog", "run", *files, "--output", "edge", "--format", "csv", "--out", str(out)
    )
    with (out / "edge.csv").open(newline="") as handle:
        assert list(csv.reader(handle)) == [["a", "b"], ["b", "c"], ["c", "tab\there"], ["x", 'a,"q"']]
    status, _out, err = run(
        "datalog", "run", *files, "--output", "path", "--output", "edge", "--format", "tsv"
    )
    assert status == 2 and "2 relations as tsv need --out DIR" in err
    status, _out, err = run("datalog", "run", *files, "--format", "tsv", "--trees")
    assert status == 2 and "--trees writes proofs" in err
    status, stdout, _err = run("datalog", "run", *files, "--format", "tsv")
    assert stdout.splitlines()[:2] == ["a\tb", "b\tc"]  # one relation: stdout


def test_the_default_lines_carry_each_fact_s_last_step(run: Runner, files: tuple[str, str]) -> None:
    rules, facts = files
    status, out, err = run("datalog", "run", *files, "--output", "far", "--output", "edge")
    lines = [json.loads(line) for line in out.splitlines()]
    assert (status, err) == (0, "") and [line["predicate"] for line in lines] == ["far"] * 2 + ["edge"] * 4
    far = lines[0]  # far("a"): path is not written, and its facts are far's premises all the same
    assert far == {
        "predicate": "far",
        "args": [{"text": "a"}],
        "proof": {
            "rule": 2,
            "at": f"{rules}:10",
            "premises": [
                {"predicate": "path", "args": [{"text": "a"}, {"text": "b"}]},
                {"predicate": "path", "args": [{"text": "b"}, {"text": "c"}]},
            ],
        },
    }
    assert [line["proof"] for line in lines[2:]] == [
        {"span": {"file": facts, "line": n}} for n in range(1, 5)
    ]
    status, out, _err = run("datalog", "run", *files, "--output", "far", "--trees")
    assert json.loads(out.splitlines()[0])["proof"][0]["rule"] == "far(X) :- path(X, Y), path(Y, _)."


def test_explain_prints_the_proof_tree_with_the_input_spans(run: Runner, files: tuple[str, str]) -> None:
    status, out, _err = run("datalog", "explain", *files, 'path("a", "tab\\there")')
    rules, facts = files
    assert status == 0
    assert out.splitlines() == [
        f'path("a", "tab\\there")  [rule 1 at {rules}:9: path(X, Z) :- path(X, Y), edge(Y, Z).]',
        f'  path("a", "c")  [rule 1 at {rules}:9: path(X, Z) :- path(X, Y), edge(Y, Z).]',
        f'    path("a", "b")  [rule 0 at {rules}:8: path(X, Y) :- edge(X, Y), !blocked(X).]',
        f'      edge("a", "b")  [fact at {facts}:1]',
        '      !blocked("a")  [checked]',
        f'    edge("b", "c")  [fact at {facts}:2]',
        f'  edge("c", "tab\\there")  [fact at {facts}:3]',
    ]
    status, out, _err = run("datalog", "explain", *files, 'path("a", "tab\\there")', "--depth", "1")
    assert out.splitlines()[1] == '  path("a", "c")  [rule 1, not expanded]' and len(out.splitlines()) == 3
    status, out, _err = run("datalog", "explain", *files, 'far("a")', "--json")
    proof = json.loads(out)["proof"]
    assert proof[0]["rule"] == "far(X) :- path(X, Y), path(Y, _)." and {"file": facts, "line": 1} in [
        node.get("span") for node in proof
    ]


def test_explain_says_which_literal_fails_the_nearest_candidate(run: Runner, files: tuple[str, str]) -> None:
    status, out, _err = run("datalog", "explain", *files, 'path("a", "x")')
    assert status == 1
    assert (
        out.splitlines()[0]
        == 'path("a", "x") does not hold: every rule whose head matches fails on a body literal:'
    )
    assert '  edge("a", "x")  fails' in out  # rule 0: no such edge
    recursive = out[out.index("rule 1 at") :].splitlines()
    assert recursive[1] == '  path("a", "b")  holds'
    assert recursive[2].startswith('  edge("b", "x")  fails  (the nearest candidate binding;')
    status, out, _err = run("datalog", "explain", *files, 'edge("a", "x")')
    assert status == 1 and "no rule derives edge, and it is not among the input facts" in out
    status, _out, err = run("datalog", "explain", *files, 'path("a", X)')
    assert status == 2 and "one ground atom" in err
    status, _out, err = run("datalog", "explain", *files, 'path("a")')
    assert status == 2 and "path takes 2 argument(s)" in err


def test_plain_fact_lines_are_read_as_the_records_would_read_them(tmp_path: Path) -> None:
    facts = tmp_path / "facts.jsonl"
    lines = [
        {"predicate": "p", "args": ["a", 1, 2.0, 2.5, -3]},
        {"predicate": "p", "args": ["a", 2**60, {"text": "t"}, {"number": 4}]},
        {"predicate": "p", "args": ["a", 1], "span": {"file": "x.py", "line": 3}},
        {"predicate": "q"},
        {"predicate": "Bad", "args": []},
    ]
    facts.write_text("\n".join(json.dumps(line) for line in lines) + "\nnot json\n")
    fast = list(read_input_facts(facts))
    slow = [item if isinstance(item, Exception) else input_fact(item) for item in read_fact_lines(facts)]
    assert [str(item) if isinstance(item, Exception) else item[:2] for item in fast] == [
        str(item) if isinstance(item, Exception) else item[:2] for item in slow
    ]
    assert fast[0] == ("p", ("a", 1, 2, 2.5, -3), (str(facts), 1))  # read without records
    assert fast[1][:2] == ("p", ("a", float(2**60), "t", 4))  # type: ignore[index]
    assert str(fast[4]).startswith(f"{facts}:5: not a fact") and str(fast[5]).startswith(
        f"{facts}:6: not valid"
    )


def test_a_directive_naming_no_predicate_is_refused_at_its_line(run: Runner, tmp_path: Path) -> None:
    rules = tmp_path / "typo.dl"
    rules.write_text("path(X, Y) :- edge(X, Y).\n.output paths\n")
    status, out, err = run("datalog", "check", str(rules))
    assert (status, out) == (
        2,
        "",
    ) and err == f"{rules}:2:1: .output paths: no rule, fact or .decl names paths\n"
