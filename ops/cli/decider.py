"""``ouro scan PATH`` and ``ouro pre-push``: the decider from the command line.

    ouro scan PATH… [--out DIR] [--fail-on blocked|findings|never] [--rev REV] [--base REV]
              [--priors off|detected|all] [--tests] [--vendored] [--exclude GLOB]…
    ouro pre-push [REMOTE] [URL] [--mode blocking|advisory] [--deadline S] [--repo PATH] [--via auto|here|queue]
                  [--priors off|detected|all]                         (git's stdin or pre-commit's variables)
    ouro dismiss FINGERPRINT [--findings FILE] [--repo PATH]

``scan`` reads exactly the folders and files it is given from disk (a git checkout or a plain folder;
``--rev``/``--base`` read the checkout's commits instead), decides in this process and writes
findings.json (each finding with its ``decision``), SARIF
2.1.0, findings.md, dropped_by_engine.json and manifest.json. ``pre-push`` reads the pushed refs (git's
stdin, or pre-commit's ``PRE_COMMIT_*`` variables), records ``PushReceived``, has each ref decided within the
deadline (in this process with the decider worker's core, or by a running worker through the queue:
``ops.pushes``) and prints one line per decision; a push not decided in time is ``undecided: deadline``
(ADVISORY, unscored, never blocks). Defaults: ``--mode blocking``, ``--deadline`` 30 s, ``--via auto``;
``scan --fail-on never``.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from ouroboros_gates.events import SqlEventStore, open_store
from ouroboros_gates.forge.git import git
from ouroboros_gates.ops.pushes import Decided, Via
from ouroboros_gates.schemas import Action, Decision, DecisionMade, content_id
from ouroboros_gates.schemas.errors import GitError, OuroError
from ouroboros_gates.schemas.settings import load_settings

__all__ = ["register"]

console = Console(stderr=True, highlight=False, soft_wrap=True)


class FailOn(StrEnum):
    """When ``ouro scan`` exits 1."""

    BLOCKED = "blocked"
    FINDINGS = "findings"
    NEVER = "never"


class Mode(StrEnum):
    """``blocking`` refuses a push with a BLOCK; ``advisory`` lists and never refuses."""

    BLOCKING = "blocking"
    ADVISORY = "advisory"


def _git(repo: Path, *args: str) -> str:
    done = git(*args, cwd=repo, check=False, user_config=True)
    if done.returncode != 0:
        raise OuroError(f"{repo}: git {args[0]}: {done.stderr.decode('utf-8', 'replace').strip() or 'failed'}")
    return done.stdout.decode("utf-8", "replace").strip()


def repo_key(repo: Path) -> str:
    """``owner/name`` from the origin remote, else the directory's name."""
    url = git("config", "--get", "remote.origin.url", cwd=repo, check=False, user_config=True).stdout.decode().strip()
    tail = url.removesuffix(".git").replace(":", "/").split("/")[-2:] if url else []
    return "/".join(tail) if len(tail) == 2 and all(tail) else repo.resolve().name


def _toplevel(path: Path) -> Path | None:
    """The git checkout holding ``path``, or None (git is used when present, never required)."""
    folder = path if path.is_dir() else path.parent
    try:
        done = git("rev-parse", "--show-toplevel", cwd=folder, check=False, user_config=True)
    except GitError:  # git is not installed: a plain folder
        return None
    top = done.stdout.decode("utf-8", "replace").strip()
    return Path(top).resolve() if done.returncode == 0 and top else None


class PriorsChoice(StrEnum):
    """Which framework and library priors are on: none, what each file imports, or all."""

    OFF = "off"
    DETECTED = "detected"
    ALL = "all"


_PRIORS_HELP = (
    "Framework and library knowledge (Flask's request, Django's HttpResponse, requests.get…): detected = what each "
    "file imports (and, for Express-like frameworks, what a manifest declares); off; all."
)


@dataclass(frozen=True)
class _Target:
    """What a scan decides: the analysed candidates and where they came from."""

    root: Path
    key: str
    head: str
    folder: Path
    scanned: dict[str, object]
    analysed: list[Any]


def scan(
    paths: Annotated[
        list[Path], typer.Argument(metavar="PATH...", help="Folders or files to scan (a git checkout or not).")
    ],
    out: Annotated[Path | None, typer.Option(help="Report folder (default ROOT/.ouroboros/scan).")] = None,
    fail_on: Annotated[FailOn, typer.Option("--fail-on", help="Exit 1 on any BLOCK, any finding, or never.")] = (
        FailOn.NEVER
    ),
    rev: Annotated[str | None, typer.Option(help="Scan this commit of the checkout instead of the files on disk.")] = (
        None
    ),
    base: Annotated[str | None, typer.Option(help="Decide only the change BASE..REV (REV default HEAD).")] = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option(help="Leave out the paths under PATH this glob matches at their end (vendor, *.min.js, docs/*)."),
    ] = None,
    tests: Annotated[
        bool,
        typer.Option("--tests", help="Scan test code below PATH too (tests/, test_*.py, *.spec.ts, *Test.java…)."),
    ] = False,
    vendored: Annotated[
        bool,
        typer.Option("--vendored", help="Scan vendored and minified code too (vendor/, *.min.js, bundled libraries)."),
    ] = False,
    priors: Annotated[PriorsChoice, typer.Option(help=_PRIORS_HELP)] = PriorsChoice.DETECTED,
) -> None:
    """Decide every candidate of the files under PATH… and write the reports (findings.json, SARIF, ...).

    Without --rev/--base the files on disk are read (git or not); with them, the checkout's commits. Below a
    PATH, dependencies and caches (node_modules, virtualenvs…), what git ignores, what --exclude names, unless
    --vendored other projects' code it ships (vendor/, *.min.js, bundled libraries) and, unless --tests, test
    code are left out, each with its reason in manifest.json; a path given as PATH is always scanned."""
    from ouroboros_gates.decider.memory import MemoryStore
    from ouroboros_gates.decider.push import decide_repository
    from ouroboros_gates.ops.cli._progress import ScanProgress

    for given in paths:
        if not given.exists() and not given.is_symlink():
            raise OuroError(f"PATH: {given}: no such file or directory")
    settings = load_settings()
    store = open_store(settings.event_log_url)
    failures: dict[str, list[str]] = {}
    leave = _Leave(tuple(exclude or ()), tests, vendored, priors.value)
    with ScanProgress(console) as shown:
        target = _target(paths, out, rev, base, leave, failures, shown)
        run, lookup = decide_repository(settings, target.root, target.key, target.head, base,
                                        store=MemoryStore(store.engine), analysed=target.analysed,
                                        progress=shown.decided)  # fmt: skip
    written = _write(run, lookup, target, base, priors.value, failures)
    _record(store, settings.tenant, target, base, run)
    _print(run, lookup.note, target, failures, written, shown)
    actions = {d.decision.action for d in run.decided}
    if (fail_on is FailOn.BLOCKED and Action.BLOCK in actions) or (
        fail_on is FailOn.FINDINGS and actions & {Action.BLOCK, Action.ADVISORY}
    ):
        raise typer.Exit(1)


@dataclass(frozen=True)
class _Leave:
    exclude: tuple[str, ...]
    tests: bool
    vendored: bool
    priors: str


def _target(paths: list[Path], out: Path | None, rev: str | None, base: str | None, leave: _Leave,
            failures: dict[str, list[str]], shown: Any) -> _Target:  # fmt: skip
    """Analyse what the scan reads: the checkout's commits (``--rev``/``--base``) or the files on disk."""
    from ouroboros_gates.decider.analyse import analyse, analyse_folder
    from ouroboros_gates.decider.folder import LeaveOut, Skipped, read_folder, scan_root

    top = _toplevel(paths[0])
    inside = top is not None and all(p.resolve().is_relative_to(top) for p in paths)
    priors: Any = leave.priors
    if rev is not None or base is not None:
        if top is None:
            raise OuroError(f"PATH: {paths[0]} is not in a git checkout (--rev and --base read commits)")
        head = _git(top, "rev-parse", "--verify", f"{rev or 'HEAD'}^{{commit}}")
        within = tuple(p.resolve().relative_to(top).as_posix() for p in paths if p.resolve().is_relative_to(top))
        scanned: dict[str, object] = {
            "root": str(top), "rev": head, "within": list(within),
            "skipped": [Skipped(str(p), f"outside the checkout {top}").as_dict() for p in paths
                        if not p.resolve().is_relative_to(top)],
        }  # fmt: skip
        analysed = analyse(
            top, head, base, repo_key(top), within=within, exclude=leave.exclude, tests=leave.tests,
            vendored=leave.vendored, priors=priors, failures=failures, progress=shown.analysed,
        )  # fmt: skip
        return _Target(top, repo_key(top), head, _report_folder(out, top), scanned, analysed)
    root = top if inside and top is not None else scan_root(paths)
    folder = _report_folder(out, root)
    ignored = _git_ignored(top) if inside and top is not None else frozenset()
    leave_out = LeaveOut(leave.exclude, ignored, leave.tests, leave.vendored)
    folder_scan = read_folder(paths, root, leave_out, progress=shown.read)
    key = repo_key(top) if inside and top is not None else root.name
    shown.expect(len(folder_scan.parsed))
    analysed = analyse_folder(folder_scan, key, priors=priors, failures=failures, progress=shown.analysed)
    return _Target(root, key, folder_scan.pin, folder, folder_scan.manifest(), analysed)


def _write(run: Any, lookup: Any, target: _Target, base: str | None, priors: str,
           failures: dict[str, list[str]]) -> dict[str, Path]:  # fmt: skip
    from ouroboros_gates.decider.report import manifest, write_reports

    meta = manifest(run, repo=target.key, head=target.head, base=base, program_source=lookup.source,
                    note=lookup.note)  # fmt: skip
    meta["scanned"] = target.scanned
    used: dict[str, int] = {}
    for item in target.analysed:
        for framework in item.priors:
            used[framework] = used.get(framework, 0) + 1
    meta["priors"] = {"setting": priors, "on_for_candidates": dict(sorted(used.items()))}
    meta["instruments_failed"] = {name: {"files": len(paths), "paths": sorted(paths)}
                                  for name, paths in sorted(failures.items()) if paths}  # fmt: skip
    return write_reports(run, target.folder, meta, lookup.note, failures)


def _record(store: SqlEventStore, tenant: str, target: _Target, base: str | None, run: Any) -> None:
    """The decisions in the event log (a repeat of the same scan appends nothing), projected."""
    from ouroboros_gates.decider.report import flows
    from ouroboros_gates.events.projections import PROJECTIONS
    from ouroboros_gates.events.projector import catch_up
    from ouroboros_gates.events.store import Metadata, StreamWrite

    message_id = content_id("scan", target.key, target.head, base, run.program_id, run.memory_digest)
    decisions = [DecisionMade(decision=d.decision, flows=flows(d)) for d in run.decided]
    store.commit([StreamWrite(f"scan/{target.head}", decisions)],
                 Metadata(producer="ouro.scan", message_id=message_id, tenant=tenant))  # fmt: skip
    catch_up(store, PROJECTIONS)


def _print(run: Any, note: str, target: _Target, failures: dict[str, list[str]], written: dict[str, Path],
           shown: Any) -> None:  # fmt: skip
    from ouroboros_gates.decider.report import compact_lines, failed_lines

    for line in compact_lines(run, note):
        console.print(line, markup=False)
    for line in failed_lines(failures):
        console.print(line, markup=False)
    skipped = target.scanned.get("skipped") or []
    assert isinstance(skipped, list)
    if skipped:
        listed = "; ".join(f"{s['path']} ({s['reason']})" for s in skipped[:_SHOWN_SKIPPED])
        more = f"; {len(skipped) - _SHOWN_SKIPPED} more" if len(skipped) > _SHOWN_SKIPPED else ""
        console.print(f"skipped {len(skipped)} path(s): {listed}{more} (every reason in manifest.json)", markup=False)
    if not shown.live:
        counts = {k: sum(d.operating_point == k for d in run.decided) for k in ("block", "advisory", "drop")}
        console.print(shown.summary(counts, len(skipped)), markup=False)
    console.print(f"reports in {target.folder}: {', '.join(sorted(written))}", markup=False)


_SHOWN_SKIPPED = 4


def _git_ignored(top: Path) -> frozenset[str]:
    """What git ignores in the checkout, relative to it (untracked only; a wholly ignored folder once, ending
    in ``/``); nothing when git cannot say."""
    try:
        done = git("ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory", cwd=top,
                   check=False, user_config=True)  # fmt: skip
    except GitError:
        return frozenset()
    if done.returncode != 0:
        return frozenset()
    return frozenset(p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p)


def _report_folder(out: Path | None, root: Path) -> Path:
    """The folder the reports go to (``--out``, else ROOT/.ouroboros/scan), made and tried before the scan
    starts: a folder that cannot be written is one error now, not a traceback after the whole analysis."""
    folder = out or root / ".ouroboros" / "scan"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise OuroError(f"--out: cannot write the reports to {folder}: {exc.strerror or exc}; give --out DIR") from exc
    return folder


def decision_line(d: Decision) -> str:
    """One compact line of a push's decision."""
    c = d.candidate
    if d.p is None:
        why = d.undecided.value if d.undecided else "unscored"
        return f"{d.action.value:<8}     -  {c.family:<18} {c.path} {c.function}  (undecided: {why}) {d.rationale}"
    cited = ", ".join(str(n) for n in d.cited_lines)
    where = f"{c.family:<18} {c.path} {c.function}"
    return f"{d.action.value:<8} {d.p:5.2f}  {where}  [{d.verdict}; lines {cited}] {d.rationale}"


def pre_push(
    remote: Annotated[str | None, typer.Argument(help="The remote's name (git passes it).")] = None,
    url: Annotated[str | None, typer.Argument(help="The remote's URL (git passes it).")] = None,
    mode: Annotated[Mode, typer.Option(help="blocking: refuse on BLOCK; advisory: list only.")] = Mode.BLOCKING,
    deadline: Annotated[float | None, typer.Option(help="Seconds to wait (default OURO_DECIDER_DEADLINE_S).")] = None,
    repo: Annotated[Path, typer.Option(help="The checkout being pushed.")] = Path("."),
    via: Annotated[
        Via,
        typer.Option(
            help="here: decide in this process; queue: through the decider's queue; "
            "auto: the queue when a running worker serves it, else here."
        ),
    ] = Via.AUTO,
    priors: Annotated[PriorsChoice, typer.Option(help=_PRIORS_HELP)] = PriorsChoice.DETECTED,
) -> None:
    """git's pre-push hook: decide the pushed refs (git's stdin, or pre-commit's PRE_COMMIT_* variables).

    Each ref is decided in this process (the decider worker's own code, on the embedded default or when no
    running worker serves the decider queue) or by a running worker through the queue; either way the log
    gets PushReceived and the DecisionMade events. Defaults: --mode blocking, --deadline 30 s, --via auto."""
    from ouroboros_gates.events.projections import PROJECTIONS
    from ouroboros_gates.events.projector import catch_up
    from ouroboros_gates.ops.pushes import decide_pushes, push_message, read_pushes

    top = Path(_git(repo, "rev-parse", "--show-toplevel")).resolve()
    settings = load_settings()
    if not any(top.is_relative_to(root) for root in settings.allowed_roots):
        # the decider may read the checkout this command was given (a remote worker has its own roots)
        os.environ["OURO_ROOTS"] = os.pathsep.join(filter(None, [settings.roots, str(top)]))
        settings = load_settings()
    store = open_store(settings.event_log_url)
    pushes = read_pushes(top, repo_key(top), os.environ, sys.stdin)
    pairs = [(push, push_message(push, settings.tenant).model_copy(update={"priors": priors.value})) for push in pushes]
    wait_s = deadline if deadline is not None else settings.decider_deadline_s
    decided = decide_pushes(store, settings, pairs, wait_s, via)
    catch_up(store, PROJECTIONS)
    messages = [message for _push, message in pairs]
    blocked = _report(store, messages, decided, mode)
    done = len(messages) - len(decided.late) - len(decided.failed)
    console.print(f"ouro pre-push ({mode.value}): {done} of {len(messages)} ref(s) decided by {decided.by}",
                  markup=False)  # fmt: skip
    if blocked and mode is Mode.BLOCKING:
        console.print(f"push refused: {blocked} BLOCK decision(s)", markup=False)
        raise typer.Exit(1)


def _report(store: SqlEventStore, messages: list[Any], decided: Decided, mode: Mode) -> int:
    from ouroboros_gates.ops.pushes import decisions_of

    blocked = 0
    for message in messages:
        where = f"{message.ref} {message.base[:7]}..{message.head[:7]}"
        if message.message_id in decided.late:
            console.print(f"ADVISORY     -  {where}  (undecided: deadline)", markup=False)
            continue
        if message.message_id in decided.failed:
            why = decided.failed[message.message_id]
            console.print(
                f"ADVISORY     -  {where}  (undecided: the decider failed: {why}; not blocking)", markup=False
            )
            continue
        found = decisions_of(store, message.head, message.message_id)
        if not found:
            done = store.is_handled(message.TASK, message.message_id)
            why = "no candidate" if done else "the decider refused the push: see `ouro status` (not blocking)"
            console.print(f"{where}: {why}", markup=False)
        for d in found:
            blocked += d.action is Action.BLOCK
            if mode is Mode.ADVISORY and d.action is Action.DROP:
                continue
            console.print(decision_line(d), markup=False)
    return blocked


def dismiss(
    fingerprint: Annotated[str, typer.Argument(help="A finding's fingerprint (findings.json).")],
    findings: Annotated[Path | None, typer.Option(help="findings.json (default REPO/.ouroboros/scan/).")] = None,
    repo: Annotated[Path, typer.Option(help="Your repository.")] = Path("."),
) -> None:
    """Dismiss a finding: kept in your repository (OURO_DECIDER_ADAPT=1 reads it), never in the store."""
    from ouroboros_gates.decider.adapt import dismiss as keep

    source = findings or repo / ".ouroboros" / "scan" / "findings.json"
    try:
        listed = json.loads(source.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise OuroError(f"--findings: {source}: {exc}") from exc
    match = [f for f in listed if f.get("fingerprint") == fingerprint]
    if not match:
        raise OuroError(f"FINGERPRINT: {fingerprint} is not in {source}")
    path = keep(repo, match[0], match[0]["decision"]["program_id"])
    console.print(f"dismissed {fingerprint} ({match[0]['family']} in {match[0]['path']}); kept in {path}", markup=False)


def register(app: typer.Typer) -> None:
    """Add ``scan``, ``pre-push`` and ``dismiss`` to ``ouro``."""
    app.command("scan")(scan)
    app.command("pre-push")(pre_push)
    app.command("dismiss")(dismiss)
