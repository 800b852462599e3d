"""A scan end to end (what ``ouro scan`` runs): read exactly the folders and files given from disk (a git
checkout or a plain folder), or a checkout's commits (``rev``, ``base..rev``); decide every candidate; write
the reports (``decider.report``: findings.json, SARIF, findings.md, dropped_by_engine.json, manifest.json);
record the decisions on ``scan/<head>`` and catch the projections up. ``scan`` returns what was decided,
skipped and written; the command prints it.

    done = scan(ScanRequest((Path("."),)), settings, store, progress)
    done.written        # report name -> path
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ouroboros_gates.decider.analyse import Analysed, Failures, analyse, analyse_folder
from ouroboros_gates.decider.assemble import Lookup
from ouroboros_gates.decider.decide import Run
from ouroboros_gates.decider.folder import LeaveOut, Skipped, read_folder, scan_root
from ouroboros_gates.decider.frameworks import Priors
from ouroboros_gates.decider.memory import MemoryStore
from ouroboros_gates.decider.push import decide_repository
from ouroboros_gates.decider.report import flows, manifest, write_reports
from ouroboros_gates.events import LedgerStore, Metadata, StreamWrite
from ouroboros_gates.events.projections import PROJECTIONS
from ouroboros_gates.events.projector import catch_up
from ouroboros_gates.forge.checkout import ignored, query, repo_key, toplevel
from ouroboros_gates.schemas import Action, DecisionMade, content_id
from ouroboros_gates.schemas.errors import OuroError
from ouroboros_gates.schemas.settings import Settings

__all__ = ["REPORT_FOLDER", "ScanProgress", "ScanRequest", "Scanned", "scan"]

PRODUCER = "ouro.scan"
REPORT_FOLDER = Path(".ouroboros") / "scan"
"""Where the reports go below the scanned root, unless told otherwise (and where ``ouro dismiss`` reads
them)."""


class ScanProgress(Protocol):
    """Told how a scan goes: each file read from disk, how many files the analysis will go through, each file
    analysed, and the candidates decided so far."""

    def read(self, path: str) -> None: ...

    def expect(self, files: int) -> None: ...

    def analysed(self, path: str) -> None: ...

    def decided(self, done: int, total: int) -> None: ...


class _Unwatched:
    """A scan nobody watches."""

    def read(self, path: str) -> None:
        """Nothing to tell."""

    def expect(self, files: int) -> None:
        """Nothing to tell."""

    def analysed(self, path: str) -> None:
        """Nothing to tell."""

    def decided(self, done: int, total: int) -> None:
        """Nothing to tell."""


@dataclass(frozen=True)
class ScanRequest:
    """What to scan and how: the paths, the report folder (default ROOT/.ouroboros/scan), a commit (``rev``)
    or a change (``base..rev``) of the checkout instead of the files on disk, what to leave out, the
    priors."""

    paths: tuple[Path, ...]
    out: Path | None = None
    rev: str | None = None
    base: str | None = None
    exclude: tuple[str, ...] = ()
    tests: bool = False
    vendored: bool = False
    priors: Priors = "detected"


@dataclass(frozen=True)
class _Target:
    """What a scan decides: the analysed candidates and where they came from."""

    root: Path
    key: str
    head: str
    folder: Path
    scanned: dict[str, object]
    analysed: list[Analysed]


@dataclass(frozen=True)
class Scanned:
    """What a scan did: the decisions and the program's note, the report folder and the reports written in it,
    the paths skipped (each with why) and, per instrument, the files it failed to read."""

    run: Run
    note: str
    folder: Path
    written: dict[str, Path]
    skipped: list[dict[str, str]]
    failures: Failures

    def actions(self) -> set[Action]:
        """The actions decided (BLOCK, ADVISORY, DROP) at least once."""
        return {d.decision.action for d in self.run.decided}

    def counts(self) -> dict[str, int]:
        """How many candidates each operating point took."""
        return {
            k: sum(d.operating_point == k for d in self.run.decided) for k in ("block", "advisory", "drop")
        }


def scan(
    request: ScanRequest, settings: Settings, store: LedgerStore, progress: ScanProgress | None = None
) -> Scanned:
    """Decide every candidate the request names, write the reports and record the decisions (a repeat of the
    same scan appends nothing)."""
    shown = progress or _Unwatched()
    failures: Failures = {}
    target = _target(request, failures, shown)
    run, lookup = decide_repository(
        settings,
        target.root,
        target.key,
        target.head,
        request.base,
        store=MemoryStore(store.side_tables),
        analysed=target.analysed,
        progress=shown.decided,
    )
    written = _write(run, lookup, target, request, failures)
    _record(store, settings.tenant, target, request.base, run)
    skipped = target.scanned.get("skipped")
    return Scanned(
        run, lookup.note, target.folder, written, skipped if isinstance(skipped, list) else [], failures
    )


def _target(request: ScanRequest, failures: Failures, shown: ScanProgress) -> _Target:
    """Analyse what the scan reads: the checkout's commits (``rev``/``base``) or the files on disk."""
    top = toplevel(request.paths[0])
    if _reads_commits(request):
        if top is None:
            raise OuroError(
                f"PATH: {request.paths[0]} is not in a git checkout (--rev and --base read commits)"
            )
        return _commits(request, top, failures, shown)
    return _files(request, top if _holds_every_path(top, request.paths) else None, failures, shown)


def _reads_commits(request: ScanRequest) -> bool:
    """Whether the scan reads the checkout's commits (``--rev``, ``--base``) instead of the files on disk."""
    return request.rev is not None or request.base is not None


def _holds_every_path(top: Path | None, paths: Sequence[Path]) -> bool:
    """Whether there is a checkout and every PATH lies in it."""
    return top is not None and all(p.resolve().is_relative_to(top) for p in paths)


def _commits(request: ScanRequest, top: Path, failures: Failures, shown: ScanProgress) -> _Target:
    """The candidates of the checkout's commit ``rev`` (or of the change ``base..rev``) under the paths."""
    head = query(top, "rev-parse", "--verify", f"{request.rev or 'HEAD'}^{{commit}}")
    resolved = [p.resolve() for p in request.paths]
    within = tuple(p.relative_to(top).as_posix() for p in resolved if p.is_relative_to(top))
    outside = _outside_checkout(request.paths, resolved, top)
    scanned: dict[str, object] = {"root": str(top), "rev": head, "within": list(within), "skipped": outside}
    key = repo_key(top)
    analysed = analyse(
        top,
        head,
        request.base,
        key,
        within=within,
        exclude=request.exclude,
        tests=request.tests,
        vendored=request.vendored,
        priors=request.priors,
        failures=failures,
        progress=shown.analysed,
    )
    return _Target(top, key, head, _report_folder(request.out, top), scanned, analysed)


def _outside_checkout(paths: Sequence[Path], resolved: Sequence[Path], top: Path) -> list[dict[str, str]]:
    """The manifest's rows of the PATHs outside the checkout (skipped)."""
    return [
        Skipped(str(given), f"outside the checkout {top}").as_dict()
        for given, p in zip(paths, resolved, strict=True)
        if not p.is_relative_to(top)
    ]


def _files(request: ScanRequest, top: Path | None, failures: Failures, shown: ScanProgress) -> _Target:
    """The candidates of the files on disk under the paths (``top``: the checkout holding every path, if one
    does: what git ignores there is left out)."""
    root = top if top is not None else scan_root(request.paths)
    folder = _report_folder(request.out, root)
    leave_out = LeaveOut(
        request.exclude, ignored(top) if top is not None else frozenset(), request.tests, request.vendored
    )
    read = read_folder(request.paths, root, leave_out, progress=shown.read)
    key = repo_key(top) if top is not None else root.name
    shown.expect(len(read.parsed))
    analysed = analyse_folder(read, key, priors=request.priors, failures=failures, progress=shown.analysed)
    return _Target(root, key, read.pin, folder, read.manifest(), analysed)


def _write(
    run: Run, lookup: Lookup, target: _Target, request: ScanRequest, failures: Failures
) -> dict[str, Path]:
    """The reports, with the manifest saying what was scanned, which priors were on and what failed."""
    meta = manifest(
        run,
        repo=target.key,
        head=target.head,
        base=request.base,
        program_source=lookup.source,
        note=lookup.note,
    )
    meta["scanned"] = target.scanned
    meta["priors"] = {"setting": request.priors, "on_for_candidates": _priors_used(target.analysed)}
    meta["instruments_failed"] = _instruments_failed(failures)
    return write_reports(run, target.folder, meta, lookup.note, failures)


def _instruments_failed(failures: Failures) -> dict[str, dict[str, object]]:
    """Per instrument that failed on some files, how many and which."""
    return {
        name: {"files": len(paths), "paths": sorted(paths)}
        for name, paths in sorted(failures.items())
        if paths
    }


def _priors_used(analysed: Sequence[Analysed]) -> dict[str, int]:
    """How many candidates each framework's priors were on for."""
    used: dict[str, int] = {}
    for item in analysed:
        for framework in item.priors:
            used[framework] = used.get(framework, 0) + 1
    return dict(sorted(used.items()))


def _record(store: LedgerStore, tenant: str, target: _Target, base: str | None, run: Run) -> None:
    """The decisions in the event log (a repeat of the same scan appends nothing), projected."""
    message_id = content_id("scan", target.key, target.head, base, run.program_id, run.memory_digest)
    decisions = [DecisionMade(decision=d.decision, flows=flows(d)) for d in run.decided]
    meta = Metadata(producer=PRODUCER, message_id=message_id, tenant=tenant)
    store.commit([StreamWrite(f"scan/{target.head}", decisions)], meta)
    catch_up(store, PROJECTIONS)


def _report_folder(out: Path | None, root: Path) -> Path:
    """The folder the reports go to (``--out``, else ROOT/.ouroboros/scan), made and tried before the scan
    starts: a folder that cannot be written is one error now, not a traceback after the whole analysis."""
    folder = out or root / REPORT_FOLDER
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise OuroError(
            f"--out: cannot write the reports to {folder}: {exc.strerror or exc}; give --out DIR"
        ) from exc
    return folder
