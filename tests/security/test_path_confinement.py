"""A path named by a message is confined to the state directory and ``OURO_ROOTS``: traversal, symlinks,
``~`` and absolute paths outside are refused with the path named, before anything is read."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ouroboros_gates.schemas import IngestRun, content_id
from ouroboros_gates.schemas.errors import PermanentError
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers.miner.ingest import ingest_run
from ouroboros_gates.workers.paths import confine


@pytest.fixture
def roots(tmp_path: Path) -> Settings:
    (tmp_path / "root" / "runs" / "r1").mkdir(parents=True)
    (tmp_path / "root" / "runs" / "r1" / "events.jsonl").write_text("{}\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "events.jsonl").write_text('{"secret": true}\n')
    return Settings(state=tmp_path / "state", roots=str(tmp_path / "root"))


@pytest.mark.parametrize(
    "path",
    [
        "/etc/passwd",
        "/",
        "{tmp}/outside",
        "{tmp}/root/../outside",
        "{tmp}/root/runs/../../outside/events.jsonl",
        "{tmp}/rootx",
        "{tmp}/root-sibling/events.jsonl",
        "~/.ssh/id_rsa",
        "{tmp}/state/../outside",
    ],
)
def test_paths_outside_the_roots_are_refused_naming_the_path(
    roots: Settings, tmp_path: Path, path: str
) -> None:
    named = path.format(tmp=tmp_path)
    with pytest.raises(PermanentError, match="outside the configured roots") as refused:
        confine(named, roots)
    assert repr(named) in str(refused.value)


def test_a_symlink_inside_a_root_that_points_outside_is_refused(roots: Settings, tmp_path: Path) -> None:
    link = tmp_path / "root" / "runs" / "escape"
    link.symlink_to(tmp_path / "outside", target_is_directory=True)
    with pytest.raises(PermanentError, match="outside the configured roots"):
        confine(str(link), roots)
    message = IngestRun(message_id=content_id("sec", "escape"), path=str(link), run="escape")
    with pytest.raises(PermanentError, match="outside the configured roots"):
        ingest_run(message, roots)  # refused before the file outside is read


def test_paths_under_a_root_or_the_state_are_let_through(roots: Settings, tmp_path: Path) -> None:
    assert (
        confine(str(tmp_path / "root" / "runs" / "r1"), roots)
        == (tmp_path / "root" / "runs" / "r1").resolve()
    )
    assert confine(str(tmp_path / "root" / "runs" / ".." / "runs" / "r1"), roots).name == "r1"
    assert confine(str(roots.state_dir / "runs" / "x"), roots).is_relative_to(roots.state_dir)


_SEGMENT = st.sampled_from(
    ["..", ".", "runs", "r1", "outside", "root", "state", "x y", "~", "", "-rf", "$(id)"]
)


@settings(max_examples=300, deadline=None)
@given(segments=st.lists(_SEGMENT, max_size=8))
def test_whatever_a_message_names_the_result_lies_under_a_root(
    tmp_path_factory: pytest.TempPathFactory, segments: list[str]
) -> None:
    tmp = tmp_path_factory.getbasetemp() / "confine"
    (tmp / "root").mkdir(parents=True, exist_ok=True)
    settings_ = Settings(state=tmp / "state", roots=str(tmp / "root"))
    named = os.path.join(str(tmp / "root"), *segments)
    try:
        resolved = confine(named, settings_)
    except PermanentError as exc:
        assert "outside the configured roots" in str(exc)
        return
    assert any(resolved.is_relative_to(root) for root in settings_.allowed_roots)


def test_a_session_folder_that_is_a_root_never_reads_its_transcript_beside_it(tmp_path: Path) -> None:
    session = "4f1c2a9e-0000-4000-8000-000000000001"
    folder = tmp_path / session
    (folder / "subagents").mkdir(parents=True)
    line = (
        json.dumps({"type": "user", "sessionId": session, "message": {"role": "user", "content": "hi"}})
        + "\n"
    )
    (folder / "subagents" / "agent-a1.jsonl").write_text(line)
    (tmp_path / f"{session}.jsonl").write_text(line)  # the main transcript, outside the only root
    confined = Settings(state=tmp_path / "state", roots=str(folder))
    message = IngestRun(message_id=content_id("sec", "beside"), path=str(folder), run=session)
    with pytest.raises(PermanentError, match="outside the configured roots"):
        ingest_run(message, confined)
