"""What a run is on disk, and how command-line paths become runs.

A run is a file (any harness format), or a run directory: its ``events.jsonl`` when it has one (the
harness layout ``<state>/<run>/events.jsonl``), otherwise the log files directly in it (``*.jsonl``,
``*.ndjson``, ``*.json``: a folder of captured hook payloads). A directory of runs holds runs below it:
``*/events.jsonl`` (or ``runs/*/events.jsonl``) when it is in the harness layout, and then only those;
otherwise any folder with log files, at any depth.

Claude Code's projects layout (``~/.claude/projects/<project>/``) is read one run per session: a
transcript ``<session>.jsonl`` (a file whose lines carry ``sessionId``; several when they carry the
same one) with its subagents' transcripts ``<session>/subagents/agent-<id>.jsonl``, named by the
``sessionId`` its lines carry (not the file's stem). A session folder whose main transcript is absent is
still a run, of its subagents, named by their ``sessionId``, with a note saying what is missing. The same
holds whether the path named is ``~/.claude/projects``, one project folder, one session file or one
session folder.
"""

from __future__ import annotations

import glob
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from pathlib import Path

from ouroboros_gates.harness.detect import Format, classify
from ouroboros_gates.harness.source import Source
from ouroboros_gates.schemas.errors import CorpusError

__all__ = [
    "LOG_SUFFIXES",
    "SUBAGENTS",
    "RunFiles",
    "expand",
    "own_agents",
    "run_at",
    "run_files",
    "run_name",
    "session_id",
]

LOG_SUFFIXES = frozenset({".jsonl", ".ndjson", ".json"})
SUBAGENTS = "subagents"
"""The folder beside a session's transcript that holds its subagents' (``<session>/subagents/``)."""
_AGENT_FILE = "agent-"
_PEEK = 50
_NOT_IN_RUN_ID = re.compile(r"[^A-Za-z0-9_.:-]+")


@dataclass(frozen=True)
class RunFiles:
    """One run: its name (a valid run id), the files it is read from in order, the path that names it
    (``run_at(path)`` gives the run back), and notes on what its layout lacks."""

    name: str
    files: tuple[Path, ...]
    path: Path
    notes: tuple[str, ...] = ()


def _cleaned(base: str) -> str:
    return _NOT_IN_RUN_ID.sub("-", base).lstrip("-_.:")[:128] or "run"


def run_name(path: Path) -> str:
    """A run id for ``path``: a run directory's name, a file's stem (``events.jsonl``: its folder's)."""
    return _cleaned(path.parent.name if path.name == "events.jsonl" else (path.name if path.is_dir() else path.stem))


def run_files(directory: Path) -> tuple[Path, ...]:
    """The files of a run directory: ``events.jsonl`` if present, else its log files (none: empty)."""
    harness = directory / "events.jsonl"
    if harness.is_file():
        return (harness,)
    return tuple(sorted(p for p in directory.iterdir() if p.is_file() and p.suffix in LOG_SUFFIXES))


def own_agents(files: Iterable[Path]) -> frozenset[str]:
    """The subagents whose own transcripts are among ``files`` (``subagents/agent-<id>.jsonl``: ``<id>``)."""
    return frozenset(
        path.stem.removeprefix(_AGENT_FILE)
        for path in files
        if path.parent.name == SUBAGENTS and path.stem.startswith(_AGENT_FILE)
    )


def session_id(path: Path) -> str | None:
    """The ``sessionId`` the first lines of a Claude Code transcript carry (a file whose first object is a
    transcript line); None for any other file."""
    if path.name == "events.jsonl" or path.suffix not in LOG_SUFFIXES:
        return None  # a harness run keeps its folder's name, whatever its lines are
    stat = path.stat()
    return _session_id(path, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=4096)
def _session_id(path: Path, _mtime_ns: int, _size: int) -> str | None:
    """``session_id`` for one version of a file (a folder's files are asked about once per listing)."""
    objects = iter(Source(path))
    try:
        for number, (_line, doc) in enumerate(islice(objects, _PEEK)):
            if number == 0 and classify(doc) is not Format.TRANSCRIPT:
                return None
            found = doc.get("sessionId")
            if isinstance(found, str) and found:
                return found
    finally:
        objects.close()
    return None


def _subagent_files(folder: Path) -> tuple[Path, ...]:
    return tuple(sorted((folder / SUBAGENTS).glob("*.jsonl"))) if (folder / SUBAGENTS).is_dir() else ()


def _session(mains: tuple[Path, ...], known: str | None = None, folder: Path | None = None) -> RunFiles:
    """The run of one session: its transcripts (the files whose lines carry its ``sessionId``; none: only
    its ``folder``), each with its subagents' transcripts."""
    folders = [main.with_suffix("") for main in mains] or ([folder] if folder else [])
    subagents = tuple(file for place in folders for file in _subagent_files(place))
    files = mains + subagents
    found = known or next((sid for sid in map(session_id, files) if sid), None)
    if mains:
        return RunFiles(_cleaned(found or mains[0].stem), files, mains[0])
    assert folder is not None  # a session has a transcript or a folder
    note = f"{folder}.jsonl: the session's main transcript is absent; its {len(subagents)} subagent file(s) read alone"
    return RunFiles(_cleaned(found or folder.name), files, folder, (note,))


def _transcripts(directory: Path) -> dict[str, list[Path]]:
    """The Claude Code transcripts directly in ``directory``, by the ``sessionId`` their lines carry."""
    found: dict[str, list[Path]] = {}
    for file in run_files(directory):
        if (sid := session_id(file)) is not None:
            found.setdefault(sid, []).append(file)
    return found


def run_at(path: Path) -> RunFiles:
    """The one run ``path`` names: a file (a transcript with its subagents), a session folder, a run directory."""
    if path.is_file():
        known = session_id(path)
        if known is None:
            return RunFiles(run_name(path), (path,), path)
        return _session(tuple(_transcripts(path.parent).get(known, [path])), known)  # its resumed parts too
    if not path.is_dir():
        raise CorpusError(f"{path}: no such file or directory")
    if not (path / "events.jsonl").is_file() and _subagent_files(path):
        main = path.with_name(f"{path.name}.jsonl")
        return run_at(main) if main.is_file() else _session((), folder=path)
    files = run_files(path)
    if not files:
        raise CorpusError(f"{path}: not a run (no events.jsonl and no *.jsonl, *.ndjson or *.json files)")
    return RunFiles(run_name(path), files, path)


def expand(items: Iterable[str | Path]) -> list[RunFiles]:
    """Runs named by files, run directories, directories of runs, or quoted globs (``**`` recurses)."""
    found: list[RunFiles] = []
    for item in items:
        text = str(item)
        matches = sorted(glob.glob(text, recursive=True)) if any(ch in text for ch in "*?[") else [text]
        if not matches:
            raise CorpusError(f"{text}: matches nothing")
        for match in matches:
            found.extend(_runs_at(Path(match)))
    unique = {run.files: run for run in found}  # the same files named twice are one run
    return list(unique.values())


def _runs_at(path: Path) -> list[RunFiles]:
    if path.is_file():
        return [run_at(path)]
    if not path.is_dir():
        raise CorpusError(f"{path}: no such file or directory")
    # A folder in the harness layout holds runs as ``<run>/events.jsonl`` (or ``runs/<run>/events.jsonl``):
    # only those are its runs, not the other files that may lie beside them (forge data, push lists).
    harness = sorted(path.glob("*/events.jsonl")) or sorted(path.glob("runs/*/events.jsonl"))
    if harness:
        return [RunFiles(run_name(f), (f,), f.parent) for f in harness]
    if path.name == SUBAGENTS and _subagent_files(path.parent):
        path = path.parent  # a session's subagents folder: the session
    runs = [run_at(path)] if _subagent_files(path) else _runs_below(path, set())
    if not runs:
        raise CorpusError(f"{path}: no harness logs (*.jsonl, *.ndjson, *.json) in it or below it")
    return runs


def _runs_below(directory: Path, seen: set[Path]) -> list[RunFiles]:
    real = directory.resolve()
    if real in seen:  # a symlink loop
        return []
    seen.add(real)
    files = run_files(directory)
    if files and files[0].name == "events.jsonl":
        return [RunFiles(run_name(directory), files, directory)]
    sessions = _transcripts(directory)
    mains = {file for group in sessions.values() for file in group}
    rest = tuple(file for file in files if file not in mains)
    runs = [_session(tuple(group), sid) for sid, group in sessions.items()]
    runs += [RunFiles(run_name(directory), rest, directory)] if rest else []
    for child in sorted(p for p in directory.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if _subagent_files(child):  # a session folder: read with its transcript, or alone without one
            if child.with_name(f"{child.name}.jsonl") not in mains:
                runs.append(_session((), folder=child))
        else:
            runs.extend(_runs_below(child, seen))
    return runs
