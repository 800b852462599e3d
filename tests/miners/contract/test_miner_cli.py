"""`ouro miner …` and `ouro datalog …`: output, exit codes and one-line errors. Most run `ops.cli.main`
in-process (the code path the `ouro` script runs); two run the real script as a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_support import run_ouro

REPO = Path(__file__).resolve().parents[3]
FIXTURES = "miners/_template/fixtures/*/events.jsonl"
LABELS = "miners/_template/fixtures/labels.tsv"
OURO = Path(sys.executable).parent / "ouro"


def ouro(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *argv: str
) -> tuple[int, str, str]:
    """Run ``ouro ARGV`` in-process from the repository root: (exit status, stdout, stderr)."""
    return run_ouro(monkeypatch, capsys, *argv, cwd=REPO)


Runner = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Runner:
    """``run(*argv)``: ``ouro ARGV`` in-process, with no extra miner directories."""
    monkeypatch.delenv("OURO_MINERS_PATH", raising=False)
    return lambda *argv: ouro(monkeypatch, capsys, *argv)


def test_findings_at_a_knee(run: Runner) -> None:
    status, out, _err = run("miner", "_template", "findings", "--knee", "468", FIXTURES)
    lines = [json.loads(line) for line in out.splitlines()]
    assert status == 0 and [line["subject"] for line in lines] == [
        [{"text": "6c1f2a10-3b7e-4d6a-9e51-0a1b2c3d4e31"}],
        [{"text": "6c1f2a10-3b7e-4d6a-9e51-0a1b2c3d4e60"}],
    ]
    assert out.startswith('{"miner":"draft-pr-late","rule":"invisible","subject":[{"text":"6c1f2a10-')
    assert all(line["severity"] == "SEVERITY_S3" and line["scope"] == "generic" for line in lines)
    assert [p["predicate"] for p in lines[1]["proof"]] == ["gated", "score", "knee"]
    assert lines[1]["proof"][1]["args"][1] == {"number": 1259}
    assert lines[1]["proof"][1]["span"]["line"] == 4


def test_facts_and_scope(run: Runner) -> None:
    status, out, _err = run("miner", "draft-pr-late", "facts", FIXTURES)
    assert status == 0 and len(out.splitlines()) == 6
    assert run("miner", "_template", "scope")[:2] == (0, "generic\n")


def test_backtest_block_and_json_come_from_one_result(run: Runner) -> None:
    status, block, _err = run("miner", "_template", "backtest", LABELS, FIXTURES)
    assert status == 0
    kappa = "468 (argmax precision on $\\Lambda_{\\le t}$ s.t. FN = 0; 3 candidates from `score`)"
    assert f"| Backtest $\\kappa^\\star$ | {kappa} |" in block
    assert "| Backtest TP | 1: 6c1f2a10-3b7e-4d6a-9e51-0a1b2c3d4e60 |" in block
    assert "| Backtest FP | 0 |\n| Backtest FN | 0 |" in block
    status, out, _err = run("miner", "_template", "backtest", "--json", LABELS, FIXTURES)
    record = json.loads(out)
    assert status == 0 and record["kappa_star"] == 468 and record["split_at"] == "2026-10-02T18:04:45Z"
    assert record["lead_s"] == {"6c1f2a10-3b7e-4d6a-9e51-0a1b2c3d4e60": 304}


def test_backtest_on_the_sample_corpus(run: Runner) -> None:
    status, out, _err = run(
        "miner", "_template", "backtest", "--json", "examples/labels.tsv", "examples/runs/*/events.jsonl"
    )
    record = json.loads(out)
    assert status == 0 and record["kappa_star"] == 610 and record["fn"] == [] and record["fp"] == []
    assert sorted(record["lead_s"].values()) == [410, 680] and record["pbo_status"] == "computed"


def test_mutate_block_and_json(run: Runner) -> None:
    status, out, _err = run("miner", "_template", "mutate", LABELS, FIXTURES)
    assert status == 0 and "| Mutation score | 1.00" in out and "knee-binds check is the only check" in out
    status, out, _err = run("miner", "_template", "mutate", "--json", LABELS, FIXTURES)
    report = json.loads(out)
    assert status == 0 and report["killed"] == 8 and report["survived"] == 0 and report["score"] == 1


def test_bad_labels_are_one_line_naming_file_and_row(run: Runner, tmp_path: Path) -> None:
    labels = tmp_path / "labels.tsv"
    labels.write_text("r1\t+\t2026-10-02T08:31:12Z\t-\n")
    status, _out, err = run("miner", "_template", "backtest", str(labels), FIXTURES)
    assert (
        status == 2
        and err
        == f"ouro: error: {labels}:1: 4 tab-separated fields, expected 5: instance +/- start flagged source\n"
    )


def test_a_label_without_an_item_is_named(run: Runner, tmp_path: Path) -> None:
    labels = tmp_path / "labels.tsv"
    labels.write_text("elsewhere\t+\t2026-10-02T08:31:12Z\t-\tx\n")
    status, _out, err = run("miner", "_template", "backtest", str(labels), FIXTURES)
    assert status == 2 and err.startswith(
        f"ouro: error: {labels}:1: elsewhere is labelled but no ITEM is that run"
    )


def test_unknown_miner_and_missing_items_exit_2(run: Runner) -> None:
    status, _out, err = run("miner", "nope", "scope")
    assert status == 2 and err.startswith("ouro: error: no miner named 'nope'")
    status, _out, err = run("miner", "_template", "facts", "no/such/*.jsonl")
    assert status == 2 and err == "ouro: error: no/such/*.jsonl: matches nothing\n"


def test_backtest_and_mutate_exit_1_with_the_failing_row_on_stderr(run: Runner, tmp_path: Path) -> None:
    # e47 (a run that opened its draft early) labelled positive, and last: the judged half misses it.
    rows = (REPO / LABELS).read_text().splitlines()
    rows[1] = "6c1f2a10-3b7e-4d6a-9e51-0a1b2c3d4e47\t+\t2026-10-03T00:00:00Z\t-\tmislabelled on purpose"
    labels = tmp_path / "labels.tsv"
    labels.write_text("\n".join(rows) + "\n")
    status, out, err = run("miner", "_template", "backtest", str(labels), FIXTURES)
    assert status == 1 and "| Backtest FN | 1: 6c1f2a10-3b7e-4d6a-9e51-0a1b2c3d4e47 |" in out
    assert "| Backtest FN | 1: 6c1f2a10-3b7e-4d6a-9e51-0a1b2c3d4e47 |" in err.splitlines()
    status, out, err = run("miner", "_template", "mutate", str(labels), FIXTURES)
    assert status == 1 and "| Mutation gate | fails: the miner fails its own checks" in out
    assert err.startswith("| Mutation gate | fails: the miner fails its own checks: ")
    status, _out, err = run("miner", "_template", "backtest", LABELS, FIXTURES)
    assert (status, err) == (0, "")


def test_a_session_folder_without_its_transcript_is_read_with_a_note(run: Runner, tmp_path: Path) -> None:
    folder = tmp_path / "proj" / "s1" / "subagents"
    folder.mkdir(parents=True)
    line = {
        "type": "user",
        "sessionId": "s-1",
        "isSidechain": True,
        "agentId": "a1",
        "uuid": "u",
        "message": {},
    }
    (folder / "agent-a1.jsonl").write_text(
        json.dumps({**line, "timestamp": "2026-10-01T10:00:00Z"}) + "\nnot json\n"
    )
    status, out, err = run("miner", "_template", "facts", str(tmp_path / "proj"))
    assert status == 0 and json.loads(out.splitlines()[0])["args"] == [
        {"text": "s-1"}
    ]  # named by its sessionId
    assert err.splitlines() == [
        f"note: {tmp_path / 'proj' / 's1'}.jsonl: the session's main transcript is absent; its 1 subagent "
        "file(s) "
        "read alone",
        f"{folder / 'agent-a1.jsonl'}:2: not JSON (invalid literal, expected 'null')",
    ]


def test_new_writes_to_the_first_miners_path_folder(
    run: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine, other = tmp_path / "mine", tmp_path / "other"
    monkeypatch.setenv("OURO_MINERS_PATH", f"{mine}:{other}")
    status, out, _err = run("miner", "new", "scratch_probe")
    assert status == 0 and out.splitlines()[0] == f"created {mine / 'scratch_probe'}"
    assert (mine / "scratch_probe" / "extract.py").is_file() and "discover it with" not in out
    status, out, _err = run("miner", "list")
    assert (
        f"scratch-probe\tscratch_probe\tgeneric\tinvisible\twarn\tSEVERITY_S3\tOURO_MINERS_PATH:{mine} "
        in out
    )


def test_list_and_new(run: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    status, out, _err = run("miner", "list")
    header, template = out.splitlines()[:2]
    assert status == 0 and header == "NAME\tFOLDER\tSCOPE\tVERDICTS\tGATE\tSEVERITY\tORIGIN"
    assert template.startswith("draft-pr-late\t_template\tgeneric\tinvisible\twarn\tSEVERITY_S3\tinstalled ")
    status, out, _err = run("miner", "new", "scratch_probe", "--dir", str(tmp_path))
    assert status == 0 and (tmp_path / "scratch_probe" / "extract.py").is_file()
    monkeypatch.setenv("OURO_MINERS_PATH", str(tmp_path))
    status, out, _err = run("miner", "test", "scratch_probe")
    assert status == 1 and out.splitlines()[-1] == "scratch-probe: 1 of 3 checks failed"
    status, _out, err = run("miner", "new", "scratch_probe", "--dir", str(tmp_path))
    assert status == 2 and "already exists" in err


def test_datalog_check_and_run(run: Runner, tmp_path: Path) -> None:
    status, out, _err = run("datalog", "check", "miners/_template/rules.dl")
    assert status == 0 and out.startswith("miners/_template/rules.dl: ok: 1 rule(s)")
    assert "derived: invisible; input: gated, score, knee" in out
    facts = tmp_path / "facts.jsonl"
    facts.write_text(
        '{"predicate":"gated","args":["r1"]}\n\n{"predicate":"score","args":["r1",900]}\n'
        '{"predicate":"knee","args":[{"number":468}]}\n{"predicate":"score","args":["r2",12]}\n'
    )
    status, out, err = run("datalog", "run", "miners/_template/rules.dl", str(facts))
    assert status == 0 and err == ""
    (line,) = [json.loads(line) for line in out.splitlines()]
    assert line["predicate"] == "invisible" and line["args"] == [{"text": "r1"}]
    assert line["proof"]["rule"] == 0  # its last step: the rule and its premises (gt(900, 468) follows)
    assert line["proof"]["premises"] == [
        {"predicate": "gated", "args": [{"text": "r1"}]},
        {"predicate": "score", "args": [{"text": "r1"}, {"number": 900}]},
        {"predicate": "knee", "args": [{"number": 468}]},
    ]
    knee_missing = tmp_path / "no-knee.jsonl"
    knee_missing.write_text('{"predicate":"gated","args":["r1"]}\n')
    status, out, err = run("datalog", "run", "miners/_template/rules.dl", str(knee_missing))
    assert (status, out, err) == (0, "", "")  # score and knee are documented inputs: no facts, no findings


@pytest.mark.parametrize(
    ("lines", "error"),
    [
        (
            '{"predicate":"gated","args":["r1"]}\nnot json\n',
            "{facts}:2: not valid JSON: Expecting value at column 1",
        ),
        (
            '{"predicate":"gated","args":["r1"]}\n{"predicate":"score","args":["r2"]}\n',
            "{facts}:2: score takes 2 argument(s), this fact has 1",
        ),
        (
            '\n{"predicate":"seen","args":["r1"]}\n{"predicate":"seen","args":["r1", 2]}\n',
            "{facts}:3: seen takes 1 argument(s), this fact has 2",
        ),
        (
            '{"predicate":"gated","args":["r1"],"extra":1}\n',
            "{facts}:1: not a fact: unknown field(s) extra (a fact has predicate, args, span)",
        ),
    ],
    ids=["not-json", "arity-against-the-rules", "arity-against-an-earlier-fact", "not-a-fact"],
)
def test_datalog_run_stops_at_the_first_bad_fact_line(
    run: Runner, tmp_path: Path, lines: str, error: str
) -> None:
    facts = tmp_path / "facts.jsonl"
    facts.write_text(lines)
    status, out, err = run("datalog", "run", "miners/_template/rules.dl", str(facts))
    assert (status, out) == (2, "")
    assert err == f"ouro: error: {error.format(facts=facts)}\n"


def test_datalog_run_refuses_a_rule_reading_a_predicate_nothing_defines(run: Runner, tmp_path: Path) -> None:
    rules = tmp_path / "rules.dl"
    rules.write_text(
        "/* predicate\n   late(R): run R is late. */\n\nlate(R) :- gated(R),\n  scroe(R, S), gt(S, 5).\n"
    )
    facts = tmp_path / "facts.jsonl"
    facts.write_text('{"predicate":"gated","args":["r1"]}\n{"predicate":"score","args":["r1",9]}\n')
    status, out, err = run("datalog", "run", str(rules), str(facts))
    assert (status, out) == (2, "")
    assert err == (
        f"{rules}:5:1: scroe is defined nowhere (no rule, fact, .decl, /* predicate */ entry or input fact): "
        "read in late(R) :- gated(R), scroe(R, S), gt(S, 5).\n"
    )
    facts.write_text('{"predicate":"gated","args":["r1"]}\n{"predicate":"scroe","args":["r1",9]}\n')
    status, out, err = run("datalog", "run", str(rules), str(facts))
    assert status == 0 and err == "" and json.loads(out)["args"] == [{"text": "r1"}]


def test_datalog_check_prints_the_error_line_and_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "unsafe.dl"
    bad.write_text("/* p */\np(X) :- q(X), !r(Y).\n")
    done = subprocess.run(
        [str(OURO), "datalog", "check", str(bad)], capture_output=True, text=True, cwd=REPO, check=False
    )
    assert done.returncode == 2 and done.stdout == ""
    assert (
        done.stderr
        == f"{bad}:2:1: negation before its variables are bound: Y in !r(Y) of p(X) :- q(X), !r(Y).\n"
    )


def test_miner_test_of_the_template_passes_as_a_script() -> None:
    done = subprocess.run(
        [str(OURO), "miner", "test", "_template"], capture_output=True, text=True, cwd=REPO, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "draft-pr-late: 12 checks passed"


def test_datalog_run_prints_each_proofs_last_step_and_whole_trees_on_request(
    run: Runner, tmp_path: Path
) -> None:
    rules = tmp_path / "path.dl"
    rules.write_text(
        "/* predicate\n   path(X, Y): a path of edges leads from X to Y. */\n"
        "path(X, Y) :- edge(X, Y).\npath(X, Z) :- path(X, Y), edge(Y, Z).\n"
    )
    facts = tmp_path / "edges.jsonl"
    facts.write_text('{"predicate":"edge","args":["a","b"]}\n{"predicate":"edge","args":["b","c"]}\n')
    status, out, _err = run("datalog", "run", str(rules), str(facts))
    lines = [
        json.loads(line) for line in out.splitlines()
    ]  # in the order found: a round's facts after the last's
    assert status == 0 and [line["args"][1]["text"] for line in lines] == ["b", "c", "c"]
    last = lines[2]
    assert last["args"] == [{"text": "a"}, {"text": "c"}]
    assert last["proof"] == {
        "rule": 1,
        "at": f"{rules}:4",
        "premises": [
            {"predicate": "path", "args": [{"text": "a"}, {"text": "b"}]},  # its own line continues the proof
            {"predicate": "edge", "args": [{"text": "b"}, {"text": "c"}]},
        ],
    }
    assert lines[0]["proof"]["premises"] == [{"predicate": "edge", "args": [{"text": "a"}, {"text": "b"}]}]
    status, out, _err = run("datalog", "run", str(rules), str(facts), "--trees")
    tree = json.loads(out.splitlines()[2])["proof"]
    assert [node["atom"] for node in tree] == [
        'path("a", "c")',
        'path("a", "b")',
        'edge("a", "b")',
        'edge("b", "c")',
    ]
    assert tree[1]["children"] == [2]
