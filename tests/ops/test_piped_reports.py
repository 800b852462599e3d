"""Reports as an agent's Bash tool sees them: the real ``ouro`` with its output piped. Tables are
tab-separated lines with every value whole, text lines are never wrapped, ``--json`` is one JSON document,
and a command that could not read some of its input says which file and exits 1 after reading the rest."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from test_cli import ROOT, ouro

EXAMPLE_RUN = sorted((ROOT / "examples" / "runs").glob("*/events.jsonl"))[0]
LONG = "run-" + "x" * 110  # with "queued " and its id, longer than 80 columns: rich would wrap it


def test_status_piped_is_a_tab_separated_table_and_json_on_request(tmp_path: Path) -> None:
    shown = ouro("status", state=tmp_path / "state")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == "# Event log head 0" and lines[1] == "what\twaiting\tin flight"
    assert "queue miner\t0\t0" in lines and "outbox pending\t0\t" in lines
    assert not any(mark in shown.stdout for mark in "│┃━…")
    document = json.loads(ouro("status", "--json", state=tmp_path / "state").stdout)
    assert document["head"] == 0 and document["healthy"] is True


def test_triggers_piped_keeps_each_line_whole_and_json_lists_them(tmp_path: Path) -> None:
    shown = ouro("triggers", "-n", "1", state=tmp_path / "state")
    assert shown.returncode == 0, shown.stderr
    derived = [line for line in shown.stdout.splitlines() if line.startswith("  derived from: ")]
    listed = json.loads(ouro("triggers", "-n", "1", "--json", state=tmp_path / "state").stdout)
    # each trigger's reason on its one line, as long as it is (no line of the report is wrapped at 80)
    assert [line.removeprefix("  derived from: ") for line in derived] == [t["derived_from"] for t in listed]
    assert max(map(len, derived)) > 80
    assert all(len(t["next"]) == 1 for t in listed)


def test_replay_json_has_both_digests(tmp_path: Path) -> None:
    done = ouro("replay", "--rebuild", "--json", state=tmp_path / "state")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["rows"] == 0 and document["as_of"] is None and "runs" in document["applied"]
    assert len(document["content_digest"]) == 64 and len(document["ledger_digest"]) == 64


def test_ingest_names_a_file_of_no_known_format_queues_the_rest_and_exits_1(tmp_path: Path) -> None:
    good, bad = tmp_path / "corpus" / LONG, tmp_path / "corpus" / "notes"
    good.mkdir(parents=True)
    bad.mkdir()
    shutil.copyfile(EXAMPLE_RUN, good / "events.jsonl")
    (bad / "events.jsonl").write_text('{"foo": 1, "bar": 2}\n')
    done = ouro("ingest", str(tmp_path / "corpus"), state=tmp_path / "state")
    assert done.returncode == 1, done.stdout + done.stderr
    assert [line.split(" (")[0] for line in done.stdout.splitlines()] == [f"queued {LONG}"]  # whole
    assert done.stderr.splitlines() == [
        f"ouro: {bad / 'events.jsonl'}: not read: no object in a known format (its first has bar, foo); "
        "expected CSF envelope lines, Claude Code stream-json, a Claude Code transcript or hook payloads "
        "(JSON lines or JSON), a SWE-agent trajectory (.traj) or OpenHands events"
    ]
    again = ouro("ingest", "--json", str(tmp_path / "corpus"), state=tmp_path / "state")
    assert again.returncode == 1
    document = json.loads(again.stdout)
    assert [row["run"] for row in document["already_queued"]] == [LONG] and document["queued"] == []
    assert [row["file"] for row in document["unread"]] == [str(bad / "events.jsonl")]


def test_ingest_of_readable_runs_exits_0(tmp_path: Path) -> None:
    (tmp_path / "corpus" / "one").mkdir(parents=True)
    shutil.copyfile(EXAMPLE_RUN, tmp_path / "corpus" / "one" / "events.jsonl")
    done = ouro("ingest", str(tmp_path / "corpus"), state=tmp_path / "state")
    assert done.returncode == 0 and done.stderr == "", done.stderr


def test_scan_json_is_the_scan_on_stdout_and_the_console_lines_stay_on_stderr(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    (plain / "app").mkdir(parents=True)
    (plain / "app" / "views.py").write_text(
        "import os\n\n\ndef listing(folder):\n    target = 'ls ' + folder\n    return os.system(target)\n"
    )
    done = ouro("scan", str(plain), "--json", state=tmp_path / "state")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    folder = plain / ".ouroboros" / "scan"
    assert document["folder"] == str(folder)
    assert document["reports"]["findings.json"] == str(folder / "findings.json")
    assert document["findings"] == json.loads((folder / "findings.json").read_text())
    assert sum(document["counts"].values()) >= 1  # the os.system call was decided
    assert f"reports in {folder}" in done.stderr
