"""From a commit (and a base, for a push) to analysed candidates: signals, roles, code and a record.

The whole head is parsed for the call graph and role inference; signals come from the quick rules,
Bandit, and language-level sink calls a parameter or a source reaches (inferred wrappers deeper than
that are features and roles, not signals: in a database-heavy repository every caller of a query helper
would otherwise be a candidate). A candidate is a (function, family) with at least one signal; in a push
only functions that hold a changed line count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ouroboros_gates.decider._scanned import (
    FileScan,
    family_signal_count,
    function_flows,
    grammar_version,
    scan_file,
    signals,
    taint_state,
    x_bandit,
    x_facts,
    x_quick,
    x_roles,
    x_taint,
)
from ouroboros_gates.decider.candidates import GitRepo, changed_lines, parse_commit, select
from ouroboros_gates.decider.evidence import evidence_of
from ouroboros_gates.decider.features import build_record
from ouroboros_gates.decider.folder import FolderScan, excluded_by, is_test_code
from ouroboros_gates.decider.frameworks import Priors, Resolved, declared, is_manifest, resolve
from ouroboros_gates.decider.instruments import (
    CallGraph,
    FunctionRoles,
    RoleEntry,
    Signal,
    build_call_graph,
    delta_facts,
    delta_state,
    families,
    infer_roles,
    vocabulary,
)
from ouroboros_gates.decider.instruments.roles import roles_version
from ouroboros_gates.decider.instruments.taint import Flow
from ouroboros_gates.decider.languages import LANGUAGES, Function, ParsedFile
from ouroboros_gates.decider.vendored import vendored_by_content, vendored_by_path
from ouroboros_gates.schemas import Candidate, FeatureRecord, InstrumentState, Scalar, State

__all__ = ["Analysed", "Failures", "Progress", "analyse", "analyse_folder", "candidates"]

Failures = dict[str, list[str]]
"""Per instrument, the files it failed to read (Bandit on a file no interpreter here parses, the taint step on
a file tree-sitter could not parse cleanly)."""
Progress = Callable[[str], None]
"""Told each file as it is analysed."""


@dataclass(frozen=True)
class Analysed:
    """One candidate with everything the program reads: its record, signals, roles and code at head.

    ``base_code`` is the same function at the base of a push (None on a scan or for a new function);
    ``flows`` the taint step's flows of the candidate's family in the function (live and sanitised);
    ``priors`` the framework and library priors that were on for its file.
    """

    candidate: Candidate
    language: str
    record: FeatureRecord
    signals: tuple[Signal, ...]
    roles: tuple[str, ...]
    code: str
    start_line: int
    end_line: int
    changed_lines: tuple[int, ...]
    base_code: str | None = None
    flows: tuple[Flow, ...] = ()
    priors: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Context:
    head: str
    base: str | None
    graph: CallGraph
    roles: Mapping[tuple[str, str], FunctionRoles]
    base_scans: Mapping[str, FileScan]
    changed: Mapping[str, frozenset[int]] | None


def analyse(
    repo: Path,
    head: str,
    base: str | None,
    repo_key: str,
    *,
    priors: Priors = "detected",
    within: tuple[str, ...] | None = None,
    exclude: tuple[str, ...] = (),
    tests: bool = True,
    vendored: bool = True,
    failures: Failures | None = None,
    progress: Progress | None = None,
) -> list[Analysed]:
    """Candidates of a push ``base..head`` (or a scan of ``head`` when ``base`` is None), analysed.

    ``within``: repository-relative folders or files; only candidates under them count (the whole head is
    still parsed for the call graph and roles); ``exclude``: globs of paths whose candidates do not count
    (``decider.folder.excluded_by``); ``tests``: whether test code counts below a folder of ``within`` that is
    not test code itself nor in a test folder (``decider.folder.is_test_code``); ``priors``: which framework
    and library priors are on (``decider.frameworks``; ``detected``: what each file imports); ``vendored``:
    whether other projects' code counts (``decider.vendored``); ``failures`` collects, per instrument, the
    files it failed to read; ``progress`` is told each file analysed."""
    git = GitRepo(repo)
    head_sha = git.resolve(head)
    base_sha = git.resolve(base) if base is not None else None
    parsed = parse_commit(git, head_sha)
    changed = _changed(git, base_sha, head_sha, parsed)
    targets = sorted(changed) if changed is not None else sorted(parsed)
    targets = _counted(targets, parsed, repo, within=within, exclude=exclude, tests=tests, vendored=vendored)
    base_parsed = parse_commit(git, base_sha, targets) if base_sha is not None else {}
    manifests = _manifests(git, head_sha) if priors == "detected" else {}
    setting = _Setting(priors, declared(manifests), failures, progress)
    return _analyse_parsed(parsed, targets, head_sha, base_sha, base_parsed, changed, repo_key, setting)


def _changed(
    git: GitRepo, base_sha: str | None, head_sha: str, parsed: Mapping[str, ParsedFile]
) -> dict[str, frozenset[int]] | None:
    """The lines a push changes in each parsed file (None: a scan)."""
    if base_sha is None:
        return None
    return {f.path: f.lines for f in changed_lines(git, base_sha, head_sha) if f.path in parsed}


def _counted(
    targets: list[str],
    parsed: Mapping[str, ParsedFile],
    repo: Path,
    *,
    within: tuple[str, ...] | None,
    exclude: tuple[str, ...],
    tests: bool,
    vendored: bool,
) -> list[str]:
    """The target files whose candidates count (see ``analyse``)."""
    targets = _selected(targets, within, exclude)
    if not tests:
        targets = _not_tests(targets, repo, within)
    if not vendored:
        targets = [t for t in targets if not _vendored(t, parsed[t])]
    return targets


def _selected(targets: list[str], within: tuple[str, ...] | None, exclude: tuple[str, ...]) -> list[str]:
    """The targets under a folder or file of ``within`` that no ``exclude`` glob leaves out."""
    return [t for t in targets if _within(t, within) and excluded_by(t, exclude) is None]


def _not_tests(targets: list[str], repo: Path, within: tuple[str, ...] | None) -> list[str]:
    """Targets that are not test code, unless below a folder of ``within`` that is test code itself."""
    given_tests = _given_tests(repo, within)
    return [t for t in targets if not is_test_code(t) or any(_under(t, w) for w in given_tests)]


def _given_tests(repo: Path, within: tuple[str, ...] | None) -> list[str]:
    """The folders of ``within`` (the whole repository without it) that are test code themselves."""
    return [w for w in within or ("",) if is_test_code((repo.resolve() / w).as_posix())]


def _within(path: str, within: tuple[str, ...] | None) -> bool:
    return within is None or any(_under(path, w) for w in within)


def _manifests(git: GitRepo, head_sha: str) -> dict[str, str]:
    """The dependency manifests at the head, as text (what the detected priors read)."""
    wanted = [p for p in git.files(head_sha) if is_manifest(p)]
    return {p: data.decode("utf-8", "replace") for p, data in git.read(head_sha, wanted).items()}


def _vendored(path: str, item: ParsedFile) -> bool:
    return vendored_by_path(path) is not None or vendored_by_content(path, item.lines) is not None


def _under(path: str, folder: str) -> bool:
    return folder in ("", ".") or path == folder or path.startswith(folder.rstrip("/") + "/")


def analyse_folder(
    scan: FolderScan,
    repo_key: str,
    *,
    priors: Priors = "detected",
    failures: Failures | None = None,
    progress: Progress | None = None,
) -> list[Analysed]:
    """Candidates of the files a folder scan read from disk (no git needed; the pin is a content digest)."""
    setting = _Setting(priors, declared(scan.manifests) if priors == "detected" else {}, failures, progress)
    return _analyse_parsed(scan.parsed, sorted(scan.parsed), scan.pin, None, {}, None, repo_key, setting)


@dataclass(frozen=True)
class _Setting:
    """The priors asked for and what the repository's manifests declare, per folder; where instrument failures
    and progress go."""

    priors: Priors
    manifests: Mapping[str, frozenset[str]]
    failures: Failures | None = None
    progress: Progress | None = None

    def of(self, item: ParsedFile) -> Resolved:
        """The priors one file gets."""
        return resolve(self.priors, item.language, item.path, item.frameworks, self.manifests)

    def union(self, items: Iterable[ParsedFile]) -> Resolved:
        """Every file's priors together: the vocabulary wrapper roles are derived from (each file's own are
        applied to its signals)."""
        if self.priors != "detected":
            return self.priors
        return frozenset().union(*(r for r in (self.of(i) for i in items) if isinstance(r, frozenset)))


def _analyse_parsed(
    parsed: Mapping[str, ParsedFile],
    targets: list[str],
    head_sha: str,
    base_sha: str | None,
    base_parsed: Mapping[str, ParsedFile],
    changed: Mapping[str, frozenset[int]] | None,
    repo_key: str,
    setting: _Setting,
) -> list[Analysed]:
    roles = infer_roles(parsed, setting.union(parsed.values()))
    scans = {path: _scan(parsed[path], setting) for path in targets}
    base_scans = {path: scan_file(item, setting.of(item)) for path, item in base_parsed.items()}
    raised = _raised(scans, roles)
    by_function = _families_raised(raised)
    context = _Context(head_sha, base_sha, build_call_graph(parsed), roles, base_scans, changed)
    chosen = select(repo_key, head_sha, {p: parsed[p] for p in targets}, by_function, changed)
    return [_analysed(context, scans[c.path], c, raised[(c.path, c.function)]) for c in chosen]


def _raised(
    scans: Mapping[str, FileScan], roles: Mapping[tuple[str, str], FunctionRoles]
) -> dict[tuple[str, str], list[Signal]]:
    """The signals each function of the target files raises, by (path, function)."""
    return {
        (path, name): found for path, scan in scans.items() for name, found in signals(scan, roles).items()
    }


def _families_raised(raised: Mapping[tuple[str, str], list[Signal]]) -> dict[tuple[str, str], set[str]]:
    """The families each function raises a signal of: what makes its candidates."""
    return {key: {signal.family for signal in found} for key, found in raised.items()}


def _scan(item: ParsedFile, setting: _Setting) -> FileScan:
    """One target file's instruments run, its failures noted and its progress told."""
    scan = scan_file(item, setting.of(item))
    if setting.failures is not None:
        _note_failures(setting.failures, scan)
    if setting.progress is not None:
        setting.progress(item.path)
    return scan


def _note_failures(failures: Failures, scan: FileScan) -> None:
    """Note the file under each instrument (Bandit, the taint step) that failed to read it."""
    for name, state in (("bandit", scan.bandit), ("taint", taint_state(scan.item))):
        if state.state is State.FAILED:
            failures.setdefault(name, []).append(scan.item.path)


def candidates(
    repo: Path, head: str, base: str | None, repo_key: str, *, priors: Priors = "detected"
) -> list[Candidate]:
    """The candidate keys of a push or a scan (``analyse`` without the records)."""
    return [item.candidate for item in analyse(repo, head, base, repo_key, priors=priors)]


def _analysed(context: _Context, scan: FileScan, candidate: Candidate, found: list[Signal]) -> Analysed:
    item, priors, family = scan.item, scan.priors, candidate.family
    function = next(f for f in item.functions if f.name == candidate.function)
    inside = _changed_inside(context, item, function)
    function_roles = context.roles.get((item.path, function.name), FunctionRoles())
    x = _features(context, scan, function, family, function_roles)
    mine = _own_signals(found, family)
    _inside, flows, _live = function_flows(item, function, family, priors)
    x["taint.evidence"] = evidence_of(flows, [s.line for s in mine]).kind
    base_code: str | None = None
    if context.base is not None:
        base_code, delta = _delta(context, scan, function, family, len(inside))
        x |= delta
    record = build_record(candidate, item.language, x, _instruments(context, scan), base=context.base)
    return Analysed(
        candidate=candidate,
        language=item.language,
        record=record,
        signals=tuple(mine),
        roles=function_roles.describe(),
        code=item.source_of(function),
        start_line=function.start_line,
        end_line=function.end_line,
        changed_lines=inside,
        base_code=base_code,
        flows=tuple(sorted(flows, key=lambda f: (f.sanitized, f.sink_line, f.source_line))),
        priors=scan.priors_on,
    )


def _own_signals(found: Sequence[Signal], family: str) -> list[Signal]:
    """The candidate's family's signals, in line order."""
    return sorted((s for s in found if s.family == family), key=lambda s: (s.line, s.instrument, s.rule))


def _changed_inside(context: _Context, item: ParsedFile, function: Function) -> tuple[int, ...]:
    """The changed lines of a push that fall in ``function``."""
    lines = context.changed.get(item.path, frozenset()) if context.changed is not None else frozenset()
    return tuple(sorted(n for n in lines if item.enclosing(n).name == function.name))


def _instruments(context: _Context, scan: FileScan) -> dict[str, InstrumentState]:
    """How each instrument fared on the candidate's file."""
    item = scan.item
    tree_state = State.FAILED if item.has_errors else State.RAN
    coverage = State.RAN if vocabulary(item.language, scan.priors) else State.NONE
    return {
        "lang": InstrumentState(state=State.RAN, version=grammar_version()),
        "qr": scan.qr,
        "bandit": scan.bandit,
        "facts": InstrumentState(state=tree_state, version=grammar_version()),
        "roles": InstrumentState(
            state=State.FAILED if item.has_errors else coverage, version=roles_version(item.language)
        ),
        "delta": delta_state(context.base),
        "taint": taint_state(item),
    }


def _features(
    context: _Context, scan: FileScan, function: Function, family: str, function_roles: FunctionRoles
) -> dict[str, Scalar]:
    """The head's features of one candidate: language, quick rules, Bandit, call graph, roles, taint."""
    item = scan.item
    x: dict[str, Scalar] = {f"lang.{language}": language == item.language for language in LANGUAGES}
    x |= x_quick(scan, function, family)
    x |= x_bandit(scan, function, family)
    x |= x_facts(context.graph, item.path, function)
    x |= x_roles(function_roles, family)
    x |= x_taint(item, function, family, scan.priors)
    return x


def _delta(
    context: _Context, scan: FileScan, function: Function, family: str, changed: int
) -> tuple[str | None, dict[str, Scalar]]:
    """The function at the base of a push, and the delta features of the change."""
    item = scan.item
    base_scan = context.base_scans.get(item.path)
    base_fn = _named_in(base_scan, function.name)
    sanitizers = _sanitizers(scan, family)
    delta = delta_facts(
        function,
        base_scan.item if base_scan else None,
        head_signals=family_signal_count(scan, function, family),
        base_signals=family_signal_count(base_scan, base_fn, family) if base_scan and base_fn else 0,
        changed=changed,
        sanitizers=sanitizers,
        head_file=item,
    )
    base_code = base_scan.item.source_of(base_fn) if base_scan and base_fn else None
    return base_code, {
        "delta.novelty": delta.novelty,
        "delta.changed_lines": delta.changed_lines,
        "delta.sanitizer_removed": delta.sanitizer_removed,
        "delta.tests": delta.tests,
    }


def _sanitizers(scan: FileScan, family: str) -> list[RoleEntry]:
    """The sanitisers of the family's operations in the vocabulary of the file's language and priors."""
    operations = families().operations_of(family)
    vocab = vocabulary(scan.item.language, scan.priors)
    return [e for e in vocab if e.kind == "sanitizer" and e.operation in operations]


def _named_in(scan: FileScan | None, name: str) -> Function | None:
    """The function of that name in a base file (None: no such file, or no such function in it)."""
    if scan is None:
        return None
    return next((f for f in scan.item.functions if f.name == name), None)
