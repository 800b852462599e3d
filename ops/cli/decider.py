"""``ouro scan PATH`` and ``ouro pre-push``: the decider from the command line.

    ouro scan PATH… [--out DIR] [--fail-on blocked|findings|never] [--rev REV] [--base REV]
              [--priors off|detected|all] [--tests] [--vendored] [--exclude GLOB]…
    ouro pre-push [REMOTE] [URL] [--mode blocking|advisory] [--deadline S] [--repo PATH] [--via
    auto|here|queue]
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
``scan --fail-on never``. The work is ``decider.scan.scan`` and ``ops.pushes.pre_push``: this module parses
the arguments and prints what they return.
"""

from __future__ import annotations

import json
import os
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ouroboros_gates.events import open_store
from ouroboros_gates.ops.cli._output import console as output_console
from ouroboros_gates.ops.cli._output import print_json
from ouroboros_gates.ops.pushes import Via
from ouroboros_gates.schemas import Action, Decision
from ouroboros_gates.schemas.errors import OuroError
from ouroboros_gates.schemas.settings import load_settings

if TYPE_CHECKING:
    from ouroboros_gates.decider.scan import Scanned
    from ouroboros_gates.ops.cli._progress import ScanProgress
    from ouroboros_gates.ops.pushes import RefDecided

__all__ = ["register"]

console = output_console(stderr=True)


class FailOn(StrEnum):
    """When ``ouro scan`` exits 1."""

    BLOCKED = "blocked"
    FINDINGS = "findings"
    NEVER = "never"


class Mode(StrEnum):
    """``blocking`` refuses a push with a BLOCK; ``advisory`` lists and never refuses."""

    BLOCKING = "blocking"
    ADVISORY = "advisory"


class PriorsChoice(StrEnum):
    """Which framework and library priors are on: none, what each file imports, or all."""

    OFF = "off"
    DETECTED = "detected"
    ALL = "all"


_PRIORS_HELP = (
    "Framework and library knowledge (Flask's request, Django's HttpResponse, requests.get…): detected = "
    "what each "
    "file imports (and, for Express-like frameworks, what a manifest declares); off; all."
)


def scan(
    paths: Annotated[
        list[Path],
        typer.Argument(metavar="PATH...", help="Folders or files to scan (a git checkout or not)."),
    ],
    out: Annotated[Path | None, typer.Option(help="Report folder (default ROOT/.ouroboros/scan).")] = None,
    fail_on: Annotated[
        FailOn, typer.Option("--fail-on", help="Exit 1 on any BLOCK, any finding, or never.")
    ] = (FailOn.NEVER),
    rev: Annotated[
        str | None, typer.Option(help="Scan this commit of the checkout instead of the files on disk.")
    ] = (None),
    base: Annotated[
        str | None, typer.Option(help="Decide only the change BASE..REV (REV default HEAD).")
    ] = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option(
            help="Leave out the paths under PATH this glob matches at their end (vendor, *.min.js, docs/*)."
        ),
    ] = None,
    tests: Annotated[
        bool,
        typer.Option(
            "--tests", help="Scan test code below PATH too (tests/, test_*.py, *.spec.ts, *Test.java…)."
        ),
    ] = False,
    vendored: Annotated[
        bool,
        typer.Option(
            "--vendored", help="Scan vendored and minified code too (vendor/, *.min.js, bundled libraries)."
        ),
    ] = False,
    priors: Annotated[PriorsChoice, typer.Option(help=_PRIORS_HELP)] = PriorsChoice.DETECTED,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json", help="Print the scan as JSON on stdout: counts, reports, skipped paths, the findings."
        ),
    ] = False,
) -> None:
    """Decide every candidate of the files under PATH… and write the reports (findings.json, SARIF, ...).

    Without --rev/--base the files on disk are read (git or not); with them, the checkout's commits. Below a
    PATH, dependencies and caches (node_modules, virtualenvs…), what git ignores, what --exclude names, unless
    --vendored other projects' code it ships (vendor/, *.min.js, bundled libraries) and, unless --tests, test
    code are left out, each with its reason in manifest.json; a path given as PATH is always scanned."""
    from ouroboros_gates.decider.scan import ScanRequest
    from ouroboros_gates.decider.scan import scan as scan_paths
    from ouroboros_gates.ops.cli._progress import ScanProgress

    _check_paths(paths)
    settings = load_settings()
    store = open_store(settings.event_log_url)
    request = ScanRequest(tuple(paths), out, rev, base, tuple(exclude or ()), tests, vendored, priors.value)
    with ScanProgress(console) as shown:
        done = scan_paths(request, settings, store, shown)
    _print(done, shown)
    if as_json:
        print_json(json.dumps(_scan_json(done), indent=2, sort_keys=True))
    if _fails(fail_on, done.actions()):
        raise typer.Exit(1)


def _check_paths(paths: list[Path]) -> None:
    """An error naming the first PATH that does not exist (a dangling link is scanned, not refused)."""
    for given in paths:
        if not given.exists() and not given.is_symlink():
            raise OuroError(f"PATH: {given}: no such file or directory")


def _fails(fail_on: FailOn, actions: set[Action]) -> bool:
    """Whether the scan exits 1: on a BLOCK (``blocked``), or on any BLOCK or ADVISORY (``findings``)."""
    return (fail_on is FailOn.BLOCKED and Action.BLOCK in actions) or bool(
        fail_on is FailOn.FINDINGS and actions & {Action.BLOCK, Action.ADVISORY}
    )


def _print(done: Scanned, shown: ScanProgress) -> None:
    from ouroboros_gates.decider.report import compact_lines, failed_lines

    for line in [*compact_lines(done.run, done.note), *failed_lines(done.failures)]:
        console.print(line, markup=False)
    skipped = done.skipped
    if skipped:
        console.print(_skipped_line(skipped), markup=False)
    if not shown.live:
        console.print(shown.summary(done.counts(), len(skipped)), markup=False)
    console.print(f"reports in {done.folder}: {', '.join(sorted(done.written))}", markup=False)


def _skipped_line(skipped: list[dict[str, str]]) -> str:
    """The paths left out: the first few with their reason, and how many more."""
    listed = "; ".join(f"{s['path']} ({s['reason']})" for s in skipped[:_SHOWN_SKIPPED])
    more = f"; {len(skipped) - _SHOWN_SKIPPED} more" if len(skipped) > _SHOWN_SKIPPED else ""
    return f"skipped {len(skipped)} path(s): {listed}{more} (every reason in manifest.json)"


_SHOWN_SKIPPED = 4


def _scan_json(done: Scanned) -> dict[str, object]:
    """``ouro scan --json``: what the console lines say, whole, and the findings as findings.json has them."""
    findings = done.written.get("findings.json")
    return {
        "folder": str(done.folder),
        "reports": {name: str(path) for name, path in sorted(done.written.items())},
        "counts": done.counts(),
        "note": done.note,
        "skipped": done.skipped,
        "instruments_failed": _failed_instruments(done),
        "findings": json.loads(findings.read_text()) if findings is not None else [],
    }


def _failed_instruments(done: Scanned) -> dict[str, list[str]]:
    """Each instrument that failed on some paths, with those paths, sorted."""
    return {name: sorted(paths) for name, paths in sorted(done.failures.items()) if paths}


def decision_line(d: Decision) -> str:
    """One compact line of a push's decision."""
    c = d.candidate
    if d.p is None:
        why = d.undecided.value if d.undecided else "unscored"
        return (
            f"{d.action.value:<8}     -  {c.family:<18} {c.path} {c.function}  (undecided: {why}) "
            f"{d.rationale}"
        )
    cited = ", ".join(str(n) for n in d.cited_lines)
    where = f"{c.family:<18} {c.path} {c.function}"
    return f"{d.action.value:<8} {d.p:5.2f}  {where}  [{d.verdict}; lines {cited}] {d.rationale}"


def pre_push(
    remote: Annotated[str | None, typer.Argument(help="The remote's name (git passes it).")] = None,
    url: Annotated[str | None, typer.Argument(help="The remote's URL (git passes it).")] = None,
    mode: Annotated[
        Mode, typer.Option(help="blocking: refuse on BLOCK; advisory: list only.")
    ] = Mode.BLOCKING,
    deadline: Annotated[
        float | None, typer.Option(help="Seconds to wait (default OURO_DECIDER_DEADLINE_S).")
    ] = None,
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
    from ouroboros_gates.ops.pushes import pre_push as decide_refs

    settings = load_settings()
    store = open_store(settings.event_log_url)
    done = decide_refs(
        store, settings, repo, os.environ, sys.stdin, deadline_s=deadline, via=via, priors=priors.value
    )
    for ref in done.refs:
        for line in _ref_lines(ref, mode):
            console.print(line, markup=False)
    summary = f"ouro pre-push ({mode.value}): {done.decided} of {len(done.refs)} ref(s) decided by {done.by}"
    console.print(summary, markup=False)
    if done.blocked and mode is Mode.BLOCKING:
        console.print(f"push refused: {done.blocked} BLOCK decision(s)", markup=False)
        raise typer.Exit(1)


def _ref_lines(ref: RefDecided, mode: Mode) -> list[str]:
    """What the hook says of one ref: why it has no decision, or its decisions (DROPs left out when
    advisory)."""
    undecided = _undecided_line(ref)
    if undecided is not None:
        return [undecided]
    return [decision_line(d) for d in ref.decisions if _is_shown(d, mode)]


def _is_shown(decision: Decision, mode: Mode) -> bool:
    """Whether the hook lists a decision: every one when blocking, all but the DROPs when advisory."""
    return mode is Mode.BLOCKING or decision.action is not Action.DROP


def _undecided_line(ref: RefDecided) -> str | None:
    """Why a ref has no decision (late, the decider failed, no candidate, refused), or None when it has."""
    message = ref.message
    where = f"{message.ref} {message.base[:7]}..{message.head[:7]}"
    if ref.late:
        return f"ADVISORY     -  {where}  (undecided: deadline)"
    if ref.failed is not None:
        return f"ADVISORY     -  {where}  (undecided: the decider failed: {ref.failed}; not blocking)"
    if not ref.decisions:
        why = (
            "no candidate"
            if ref.handled
            else "the decider refused the push: see `ouro status` (not blocking)"
        )
        return f"{where}: {why}"
    return None


def dismiss(
    fingerprint: Annotated[str, typer.Argument(help="A finding's fingerprint (findings.json).")],
    findings: Annotated[
        Path | None, typer.Option(help="findings.json (default REPO/.ouroboros/scan/).")
    ] = None,
    repo: Annotated[Path, typer.Option(help="Your repository.")] = Path("."),
) -> None:
    """Dismiss a finding: kept in your repository (OURO_DECIDER_ADAPT=1 reads it), never in the store."""
    from ouroboros_gates.decider.adapt import dismiss as keep
    from ouroboros_gates.decider.scan import REPORT_FOLDER

    source = findings or repo / REPORT_FOLDER / "findings.json"
    finding = _finding(source, fingerprint)
    path = keep(repo, finding, finding["decision"]["program_id"])
    console.print(
        f"dismissed {fingerprint} ({finding['family']} in {finding['path']}); kept in {path}", markup=False
    )


def _finding(source: Path, fingerprint: str) -> dict[str, Any]:
    """The first finding of findings.json with this fingerprint; an error when the file cannot be read or
    holds none."""
    try:
        listed: list[dict[str, Any]] = json.loads(source.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise OuroError(f"--findings: {source}: {exc}") from exc
    match = [f for f in listed if f.get("fingerprint") == fingerprint]
    if not match:
        raise OuroError(f"FINGERPRINT: {fingerprint} is not in {source}")
    return match[0]


def register(app: typer.Typer) -> None:
    """Add ``scan``, ``pre-push`` and ``dismiss`` to ``ouro``."""
    app.command("scan")(scan)
    app.command("pre-push")(pre_push)
    app.command("dismiss")(dismiss)
