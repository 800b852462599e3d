"""What a run is on disk, and how command-line paths become runs.

A run is a file (any harness format), or a run directory: its ``events.jsonl`` when it has one (the
harness layout ``<state>/<run>/events.jsonl``), otherwise the log files directly in it (``*.jsonl``,
``*.ndjson``, ``*.json``, ``*.traj``: a folder of captured hook payloads, an OpenHands ``events/`` folder).
A file that holds a whole run of its own (a SWE-agent trajectory, an OpenHands event list) is a run by itself
wherever it lies. A directory of runs holds runs below it: ``*/events.jsonl`` (or ``runs/*/events.jsonl``)
when it is in the harness layout, and then only those; otherwise any folder with log files, at any depth.

Claude Code's projects layout (``~/.claude/projects/<project>/``) is read one run per session: a
transcript ``<session>.jsonl`` (a file whose lines carry ``sessionId``; several when they carry the
same one) with its subagents' transcripts ``<session>/subagents/agent-<id>.jsonl``, named by the
``sessionId`` its lines carry (not the file's stem). A session folder whose main transcript is absent is
still a run, of its subagents, named by their ``sessionId``, with a note saying what is missing. Naming a
project folder or a session folder reads whole sessions; naming one transcript file reads that file alone
(a note says what else its session holds).

One session seen through two formats (its hook payloads and its transcript, named together) is one run: the
hook logs whose payloads carry a session's id join that session's run, whose calls are then counted once (by
``tool_use_id``), with a note.
"""

from __future__ import annotations

import glob
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ouroboros_gates.harness.peek import LOG_SUFFIXES, hook_session, session_id, whole_run
from ouroboros_gates.schemas.errors import CorpusError

__all__ = ["SUBAGENTS", "RunFiles", "expand", "own_agents", "run_at", "run_files", "run_name"]

SUBAGENTS = "subagents"
"""The folder beside a session's transcript that holds its subagents' (``<session>/subagents/``)."""
_AGENT_FILE = "agent-"
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
    return _cleaned(
        path.parent.name if path.name == "events.jsonl" else (path.name if path.is_dir() else path.stem)
    )


def run_files(directory: Path) -> tuple[Path, ...]:
    """The files of a run directory: ``events.jsonl`` if present, else its log files (none: empty)."""
    harness = directory / "events.jsonl"
    if harness.is_file():
        return (harness,)
    return tuple(sorted(p for p in directory.iterdir() if _is_log_file(p)))


def _is_log_file(path: Path) -> bool:
    return path.is_file() and path.suffix in LOG_SUFFIXES


def own_agents(files: Iterable[Path]) -> frozenset[str]:
    """The subagents whose own transcripts are among ``files`` (``subagents/agent-<id>.jsonl``: ``<id>``)."""
    return frozenset(path.stem.removeprefix(_AGENT_FILE) for path in files if _is_subagent_transcript(path))


def _is_subagent_transcript(path: Path) -> bool:
    """Whether ``path`` is a subagent's own transcript (``subagents/agent-<id>.jsonl``)."""
    return path.parent.name == SUBAGENTS and path.stem.startswith(_AGENT_FILE)


def _subagent_files(*folders: Path) -> tuple[Path, ...]:
    """The subagents' transcripts of the session folders, folder by folder."""
    return tuple(file for folder in folders for file in sorted((folder / SUBAGENTS).glob("*.jsonl")))


def _session(mains: tuple[Path, ...], known: str | None = None, folder: Path | None = None) -> RunFiles:
    """The run of one session: its transcripts (the files whose lines carry its ``sessionId``; none: only
    its ``folder``), each with its subagents' transcripts. Its path is its folder when it has one (naming the
    folder reads the whole session back), else its transcript."""
    if mains:
        return _transcribed_session(mains, known)
    assert folder is not None  # a session has a transcript or a folder
    return _untranscribed_session(folder, known)


def _transcribed_session(mains: tuple[Path, ...], known: str | None) -> RunFiles:
    """A session read from its transcripts, each with its subagents' transcripts."""
    folders = [main.with_suffix("") for main in mains]
    files = mains + _subagent_files(*folders)
    found = known or _first_session_id(files)
    return RunFiles(_cleaned(found or mains[0].stem), files, _session_path(mains, folders, found))


def _untranscribed_session(folder: Path, known: str | None) -> RunFiles:
    """A session folder whose main transcript is absent: its subagents' transcripts alone, with a note."""
    subagents = _subagent_files(folder)
    found = known or _first_session_id(subagents)
    absent = f"{folder}.jsonl: the session's main transcript is absent"
    note = f"{absent}; its {len(subagents)} subagent file(s) read alone"
    return RunFiles(_cleaned(found or folder.name), subagents, folder, (note,))


def _first_session_id(files: Iterable[Path]) -> str | None:
    return next((sid for sid in map(session_id, files) if sid), None)


def _session_path(mains: tuple[Path, ...], folders: list[Path], found: str | None) -> Path:
    """What names the whole session back (``run_at``): its folder, its one transcript, or, for resumed
    parts without a folder, ``<project>/<sessionId>``."""
    where = next((place for place in folders if place.is_dir()), None)
    return where if where is not None else _transcript_path(mains, found)


def _transcript_path(mains: tuple[Path, ...], found: str | None) -> Path:
    """A session without a folder: its one transcript, or ``<project>/<sessionId>`` for resumed parts."""
    return mains[0] if len(mains) == 1 or found is None else mains[0].parent / found


def _transcripts(directory: Path) -> dict[str, list[Path]]:
    """The Claude Code transcripts directly in ``directory``, by the ``sessionId`` their lines carry."""
    found: dict[str, list[Path]] = {}
    for file in run_files(directory):
        if (sid := session_id(file)) is not None:
            found.setdefault(sid, []).append(file)
    return found


def run_at(path: Path) -> RunFiles:
    """The one run ``path`` names: a file (a transcript alone: its session is named by its folder), a session
    folder or ``<project>/<sessionId>`` (the whole session), a run directory."""
    if path.is_file():
        return _file_run(path)
    if not path.is_dir():
        return _named_session(path)
    if _is_session_folder(path):
        return _session_folder(path)
    return _directory_run(path)


def _file_run(path: Path) -> RunFiles:
    """A file read alone: a transcript is named by its session, any other file by its stem."""
    known = session_id(path)
    if known is None:
        return RunFiles(run_name(path), (path,), path)
    return RunFiles(_cleaned(known), (path,), path, _left_out(path, known))


def _is_session_folder(path: Path) -> bool:
    """Whether the folder ``path`` is a Claude Code session's (subagents, and no ``events.jsonl``)."""
    return not (path / "events.jsonl").is_file() and bool(_subagent_files(path))


def _directory_run(path: Path) -> RunFiles:
    """A run directory: its ``events.jsonl``, or its log files."""
    files = run_files(path)
    if not files:
        raise CorpusError(
            f"{path}: not a run (no events.jsonl and no *.jsonl, *.ndjson, *.json or *.traj files)"
        )
    return RunFiles(run_name(path), files, path)


def _named_session(path: Path) -> RunFiles:
    """``<project>/<sessionId>``: a session of several transcripts and no folder."""
    group = _transcripts(path.parent).get(path.name) if path.parent.is_dir() else None
    if not group:
        raise CorpusError(f"{path}: no such file or directory")
    return _session(tuple(group), path.name)


def _session_folder(path: Path) -> RunFiles:
    """The session of a folder with subagents: its transcript(s) beside it with it, or the folder alone."""
    main = path.with_name(f"{path.name}.jsonl")
    if not main.is_file():
        return _session((), folder=path)
    known = session_id(main)
    return _session(tuple(_transcripts(path.parent).get(known, [main]) if known else [main]), known)


def _left_out(path: Path, known: str) -> tuple[str, ...]:
    """A note naming what else the session of the transcript ``path`` holds, when it holds more."""
    others = _other_parts(path, known)
    if not others:
        return ()
    return (
        f"{path}: read alone; its session {known} has {others} other file(s) (subagents, resumed parts), "
        f"read when the session's folder {path.with_suffix('')} or its project folder is named",
    )


def _other_parts(path: Path, known: str) -> int:
    """How many files besides the transcript ``path`` its session holds: resumed parts and subagents."""
    siblings = [file for file in _transcripts(path.parent).get(known, []) if file != path]
    return len(siblings) + len(_subagent_files(path.with_suffix("")))


def expand(items: Iterable[str | Path]) -> list[RunFiles]:
    """Runs named by files, run directories, directories of runs, or quoted globs (``**`` recurses)."""
    found: list[RunFiles] = []
    for item in items:
        for match in _matches(str(item)):
            found.extend(_runs_at(Path(match)))
    unique = {run.files: run for run in found}  # the same files named twice are one run
    return _joined(list(unique.values()))


def _matches(text: str) -> list[str]:
    """The paths a command-line item names: a glob's matches (none is an error), or the item itself."""
    matches = sorted(glob.glob(text, recursive=True)) if _is_glob(text) else [text]
    if not matches:
        raise CorpusError(f"{text}: matches nothing")
    return matches


def _is_glob(text: str) -> bool:
    return any(ch in text for ch in "*?[")


def _joined(runs: list[RunFiles]) -> list[RunFiles]:
    """The runs, with each hook log whose payloads carry a session's id read in that session's run."""
    sessions = _session_indexes(runs)
    moved: dict[int, list[int]] = {}
    for index, run in enumerate(runs):
        target = _hooks_session(run, sessions)
        if target is not None and target != index:
            moved.setdefault(target, []).append(index)
    return _merged(runs, moved)


def _session_indexes(runs: list[RunFiles]) -> dict[str, int]:
    """The index of each run that is a session (a file of it carries a ``sessionId``), by its name."""
    return {run.name: index for index, run in enumerate(runs) if any(map(session_id, run.files))}


def _merged(runs: list[RunFiles], moved: dict[int, list[int]]) -> list[RunFiles]:
    """The runs, each one ``moved`` names (a session's index -> its hook logs' runs' indexes) read in
    that session's run."""
    gone = _absorbed(moved)
    return [
        _join(run, [runs[other] for other in moved[index]]) if index in moved else run
        for index, run in enumerate(runs)
        if index not in gone
    ]


def _absorbed(moved: dict[int, list[int]]) -> set[int]:
    """The indexes of the runs read in another's run."""
    return {index for group in moved.values() for index in group}


def _hooks_session(run: RunFiles, sessions: dict[str, int]) -> int | None:
    """The index of the session whose hook logs all of ``run``'s files are, if they are one session's."""
    only = _one_hook_session(run)
    return sessions.get(_cleaned(only)) if only is not None else None


def _one_hook_session(run: RunFiles) -> str | None:
    """The session id all of ``run``'s files carry as hook payloads, if they carry one and the same."""
    ids = {hook_session(file) for file in run.files}
    return ids.pop() if len(ids) == 1 else None


def _join(session: RunFiles, hooks: list[RunFiles]) -> RunFiles:
    files = session.files + tuple(file for run in hooks for file in run.files)
    logs = ", ".join(str(run.path) for run in hooks)
    note = (
        f"session {session.name} is read through two formats (its transcript and the hook log(s) {logs}): "
        "one run, each call counted once by tool_use_id"
    )
    return RunFiles(session.name, files, session.path, (*session.notes, note))


def _runs_at(path: Path) -> list[RunFiles]:
    if path.is_file():
        return [run_at(path)]
    if not path.is_dir():
        raise CorpusError(f"{path}: no such file or directory")
    return _harness_runs(path) or _folder_runs(path)


def _harness_runs(path: Path) -> list[RunFiles]:
    """The runs of a folder in the harness layout; none when it is not in that layout."""
    # A folder in the harness layout holds runs as ``<run>/events.jsonl`` (or ``runs/<run>/events.jsonl``):
    # only those are its runs, not the other files that may lie beside them (forge data, push lists).
    harness = sorted(path.glob("*/events.jsonl")) or sorted(path.glob("runs/*/events.jsonl"))
    return [RunFiles(run_name(f), (f,), f.parent) for f in harness]


def _folder_runs(path: Path) -> list[RunFiles]:
    """The runs of a folder not in the harness layout: a session, or the log files at any depth."""
    if _is_subagents_folder(path):
        path = path.parent  # a session's subagents folder: the session
    runs = [run_at(path)] if _subagent_files(path) else _runs_below(path, set())
    if not runs:
        raise CorpusError(f"{path}: no harness logs (*.jsonl, *.ndjson, *.json, *.traj) in it or below it")
    return runs


def _is_subagents_folder(path: Path) -> bool:
    """Whether ``path`` is a session's ``subagents/`` folder."""
    return path.name == SUBAGENTS and bool(_subagent_files(path.parent))


def _runs_below(directory: Path, seen: set[Path]) -> list[RunFiles]:
    real = directory.resolve()
    if real in seen:  # a symlink loop
        return []
    seen.add(real)
    files = run_files(directory)
    if files and files[0].name == "events.jsonl":
        return [RunFiles(run_name(directory), files, directory)]
    sessions = _transcripts(directory)
    mains = _main_transcripts(sessions)
    runs = _runs_in(directory, files, sessions, mains)
    for child in _subfolders(directory):
        runs += _runs_of_child(child, mains, seen)
    return runs


def _main_transcripts(sessions: dict[str, list[Path]]) -> set[Path]:
    return {file for group in sessions.values() for file in group}


def _subfolders(directory: Path) -> list[Path]:
    """The folders in ``directory`` a walk enters, in order (hidden ones are skipped)."""
    return sorted(p for p in directory.iterdir() if p.is_dir() and not p.name.startswith("."))


def _runs_in(
    directory: Path, files: tuple[Path, ...], sessions: dict[str, list[Path]], mains: set[Path]
) -> list[RunFiles]:
    """The runs of the log files directly in ``directory``: its sessions, each file that holds a whole
    run, and the other files as one run."""
    alone, rest = _loose_files(files, mains)
    runs = [_session(tuple(group), sid) for sid, group in sessions.items()]
    runs += [RunFiles(run_name(file), (file,), file) for file in alone]
    if rest:
        runs.append(RunFiles(run_name(directory), rest, directory))
    return runs


def _loose_files(files: tuple[Path, ...], mains: set[Path]) -> tuple[list[Path], tuple[Path, ...]]:
    """The log files no session holds: those that each hold a whole run, and the rest."""
    alone: list[Path] = []
    rest: list[Path] = []
    for file in files:
        if file not in mains:
            (alone if whole_run(file) else rest).append(file)
    return alone, tuple(rest)


def _runs_of_child(child: Path, mains: set[Path], seen: set[Path]) -> list[RunFiles]:
    """The runs of a child folder; a session folder is read with its transcript, or alone without one."""
    if not _subagent_files(child):
        return _runs_below(child, seen)
    if child.with_name(f"{child.name}.jsonl") in mains:
        return []
    return [_session((), folder=child)]
