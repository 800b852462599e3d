"""What a run is on disk, and how command-line paths become runs.

A run is a file (any harness format), or a run directory: its ``events.jsonl`` when it has one (the
harness layout ``<state>/<run>/events.jsonl``), otherwise the log files directly in it (``*.jsonl``,
``*.ndjson``, ``*.json``: a project folder of transcripts, a folder of captured hook payloads). A
directory of runs holds runs below it: ``*/events.jsonl`` (or ``runs/*/events.jsonl``) when it is in the
harness layout, and then only those; otherwise any folder with log files, at any depth.
"""

from __future__ import annotations

import glob
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from schemas.errors import CorpusError

__all__ = ["LOG_SUFFIXES", "RunFiles", "expand", "run_files", "run_name"]

LOG_SUFFIXES = frozenset({".jsonl", ".ndjson", ".json"})
_NOT_IN_RUN_ID = re.compile(r"[^A-Za-z0-9_.:-]+")


@dataclass(frozen=True)
class RunFiles:
    """One run: its name (a valid run id) and the files it is read from, in order."""

    name: str
    files: tuple[Path, ...]
    path: Path


def run_name(path: Path) -> str:
    """A run id for ``path``: a run directory's name, a file's stem (``events.jsonl``: its folder's)."""
    base = path.parent.name if path.name == "events.jsonl" else (path.name if path.is_dir() else path.stem)
    cleaned = _NOT_IN_RUN_ID.sub("-", base).lstrip("-_.:")[:128]
    return cleaned or "run"


def run_files(directory: Path) -> tuple[Path, ...]:
    """The files of a run directory: ``events.jsonl`` if present, else its log files (none: empty)."""
    harness = directory / "events.jsonl"
    if harness.is_file():
        return (harness,)
    return tuple(sorted(p for p in directory.iterdir() if p.is_file() and p.suffix in LOG_SUFFIXES))


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
        return [RunFiles(run_name(path), (path,), path)]
    if not path.is_dir():
        raise CorpusError(f"{path}: no such file or directory")
    # A folder in the harness layout holds runs as ``<run>/events.jsonl`` (or ``runs/<run>/events.jsonl``):
    # only those are its runs, not the other files that may lie beside them (forge data, push lists).
    harness = sorted(path.glob("*/events.jsonl")) or sorted(path.glob("runs/*/events.jsonl"))
    runs = [RunFiles(run_name(f), (f,), f.parent) for f in harness] or _runs_below(path, set())
    if not runs:
        raise CorpusError(f"{path}: no harness logs (*.jsonl, *.ndjson, *.json) in it or below it")
    return runs


def _runs_below(directory: Path, seen: set[Path]) -> list[RunFiles]:
    real = directory.resolve()
    if real in seen:  # a symlink loop
        return []
    seen.add(real)
    files = run_files(directory)
    runs = [RunFiles(run_name(directory), files, directory)] if files else []
    if files and files[0].name == "events.jsonl":
        return runs
    for child in sorted(p for p in directory.iterdir() if p.is_dir() and not p.name.startswith(".")):
        runs.extend(_runs_below(child, seen))
    return runs
