"""``decider.scan.scan`` without a command line: it tells the progress it is given about each file, returns
what ``ouro scan`` prints (the decisions, the reports written, the paths skipped and why) and records the
decisions on ``scan/<head>`` once; a repeat appends nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ouroboros_gates.decider.scan import REPORT_FOLDER, ScanRequest, scan
from ouroboros_gates.events import open_store
from ouroboros_gates.schemas.errors import OuroError
from ouroboros_gates.schemas.settings import load_settings

_FLAW = """import os


def listing(folder):
    target = "ls " + folder
    return os.system(target)
"""


@pytest.fixture(autouse=True)
def _embedded_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OURO_STATE", str(tmp_path / "state"))
    for name in (
        "OURO_MODEL",
        "OURO_MODEL_URL",
        "OURO_EMBED_MODEL",
        "OURO_DATABASE_URL",
        "OURO_DECIDER_PROGRAM",
    ):
        monkeypatch.delenv(name, raising=False)


class _Seen:
    """What a scan told its progress."""

    def __init__(self) -> None:
        self.files_read: list[str] = []
        self.expected: list[int] = []
        self.files_analysed: list[str] = []
        self.steps: list[tuple[int, int]] = []

    def read(self, path: str) -> None:
        self.files_read.append(path)

    def expect(self, files: int) -> None:
        self.expected.append(files)

    def analysed(self, path: str) -> None:
        self.files_analysed.append(path)

    def decided(self, done: int, total: int) -> None:
        self.steps.append((done, total))


def test_a_scan_returns_what_it_decided_wrote_and_skipped_and_records_it_once(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "views.py").write_text(_FLAW)
    (plain / "broken.py").write_text("def oops(:\n    return\n")
    settings = load_settings()
    store = open_store(settings.event_log_url)
    seen = _Seen()
    done = scan(ScanRequest((plain,)), settings, store, seen)
    assert done.folder == plain / REPORT_FOLDER
    assert sorted(done.written) == sorted(
        p.name for p in done.folder.iterdir()
    )  # every report it wrote, named
    assert [row["path"] for row in done.skipped] == ["broken.py"]
    assert done.skipped[0]["reason"].startswith("does not parse")
    assert "views.py" in seen.files_read and seen.expected == [1] and seen.files_analysed == ["views.py"]
    assert seen.steps and seen.steps[-1] == (len(done.run.decided), len(done.run.decided))
    functions = {d.decision.candidate.function for d in done.run.decided}
    assert functions == {"listing"} and sum(done.counts().values()) == len(done.run.decided)
    findings = json.loads(done.written["findings.json"].read_text())
    kept = {d.decision.candidate.function for d in done.run.decided if d.operating_point != "drop"}
    assert {f["function"] for f in findings} == kept  # the report holds what was not dropped
    recorded = [e for e in store.read(limit=1000) if e.type == "DecisionMade"]
    assert len(recorded) == len(done.run.decided) and {e.stream for e in recorded} == {
        f"scan/{done.run.decided[0].decision.candidate.pin}"
    }
    scan(ScanRequest((plain,)), settings, store)  # nobody watching: the same scan again
    assert len([e for e in store.read(limit=1000) if e.type == "DecisionMade"]) == len(recorded)


def test_commits_are_read_only_from_a_checkout(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    settings = load_settings()
    with pytest.raises(OuroError, match=r"PATH: .* is not in a git checkout"):
        scan(ScanRequest((plain,), rev="HEAD"), settings, open_store(settings.event_log_url))
