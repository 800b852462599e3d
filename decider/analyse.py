"""From a commit (and a base, for a push) to analysed candidates: signals, roles, code and a record.

The whole head is parsed for the call graph and role inference; signals come from the quick rules,
Bandit, and language-level sink calls a parameter or a source reaches (inferred wrappers deeper than
that are features and roles, not signals: in a database-heavy repository every caller of a query helper
would otherwise be a candidate). A candidate is a (function, family) with at least one signal; in a push
only functions that hold a changed line count.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import cache
from importlib import metadata
from pathlib import Path

from ouroboros_gates.decider.candidates import GitRepo, changed_lines, parse_commit, select
from ouroboros_gates.decider.features import build_record
from ouroboros_gates.decider.folder import FolderScan, excluded_by, is_test_code
from ouroboros_gates.decider.frameworks import Priors, Resolved, declared, frameworks, is_manifest, resolve
from ouroboros_gates.decider.instruments import (
    BanditIssue,
    CallGraph,
    FunctionRoles,
    QuickHit,
    Signal,
    bandit_scan,
    build_call_graph,
    delta_facts,
    delta_state,
    families,
    infer_roles,
    prior_active,
    quick_scan,
    vocabulary,
)
from ouroboros_gates.decider.instruments.roles import roles_version
from ouroboros_gates.decider.instruments.taint import PARAMETER, Flow, taint_version, vocabulary_of
from ouroboros_gates.decider.languages import LANGUAGES, Function, ParsedFile
from ouroboros_gates.schemas import Candidate, FeatureRecord, InstrumentState, Scalar, State

__all__ = ["Analysed", "analyse", "analyse_folder", "candidates"]


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
class _FileScan:
    item: ParsedFile
    hits: tuple[QuickHit, ...]
    qr: InstrumentState
    issues: tuple[BanditIssue, ...]
    bandit: InstrumentState
    priors: Resolved = "off"

    @property
    def priors_on(self) -> tuple[str, ...]:
        """The ids whose priors were on for this file (every id of its language for ``all``)."""
        if self.priors == "all":
            return tuple(sorted(f.id for f in frameworks() if self.item.language in f.languages))
        return tuple(sorted(self.priors)) if isinstance(self.priors, frozenset) else ()


@cache
def _grammar_version() -> str:
    names = sorted(d.metadata["Name"] for d in metadata.distributions() if d.metadata["Name"].startswith("tree-sitter"))
    versions = [f"{name}=={metadata.version(name)}" for name in names]
    return hashlib.sha256("\n".join(versions).encode()).hexdigest()


def _scan_file(item: ParsedFile, priors: Resolved) -> _FileScan:
    hits, qr = quick_scan(item.language, item.lines)
    issues, bandit = bandit_scan(item.language, "\n".join(item.lines).encode("utf-8"))
    return _FileScan(item=item, hits=tuple(hits), qr=qr, issues=tuple(issues), bandit=bandit, priors=priors)


def _signals(scan: _FileScan, roles: Mapping[tuple[str, str], FunctionRoles]) -> dict[str, list[Signal]]:
    """Signals per function name of one file."""
    item, priors = scan.item, scan.priors
    found: dict[str, list[Signal]] = {}

    def add(line: int, signal: Signal) -> None:
        found.setdefault(item.enclosing(line).name, []).append(signal)

    for hit in scan.hits:
        rule = hit.rule
        if rule.status == "enabled" and prior_active(rule.tag, priors):
            add(
                hit.line,
                Signal("qr", rule.id, rule.family, hit.line, rule.message, rule.mechanisms, rule.precision_estimate),
            )
    for issue in scan.issues:
        add(issue.line, Signal("bandit", issue.test_id, issue.family, issue.line, issue.text))
    by_operation = families().by_operation
    for flow in _flows(item, priors):
        family = by_operation.get(flow.operation)
        if family is not None and not flow.sanitized:
            found.setdefault(flow.function, []).append(
                Signal("taint", f"taint.{flow.sink}", family, flow.sink_line, flow.describe())
            )
    if not item.has_errors:
        for function in item.functions:
            function_roles = roles.get((item.path, function.name), FunctionRoles())
            for use in function_roles.uses:
                family = by_operation.get(use.operation)
                reached = use.param_reaches or (use.nonconstant and bool(function_roles.sources))
                active = prior_active(use.tag, priors)
                if use.kind == "sink" and use.depth == 0 and reached and family is not None and active:
                    message = f"{use.operation} sink ({use.origin}) reached by a parameter or a source"
                    found.setdefault(function.name, []).append(Signal("roles", use.entry, family, use.line, message))
    return found


def _family_signal_count(scan: _FileScan, function: Function, family: str) -> int:
    """The family's signals in one function, for novelty: enabled quick-rule hits, Bandit issues, and the taint
    step's flows that reach a sink of the family unsanitised."""
    item, priors = scan.item, scan.priors
    count = sum(
        1
        for hit in scan.hits
        if hit.rule.family == family
        and hit.rule.status == "enabled"
        and prior_active(hit.rule.tag, priors)
        and item.enclosing(hit.line).name == function.name
    )
    count += sum(1 for i in scan.issues if i.family == family and item.enclosing(i.line).name == function.name)
    _inside, _mine, live = _function_flows(item, function, family, priors)
    return count + len(live)


def _x_quick(scan: _FileScan, function: Function, family: str) -> dict[str, Scalar]:
    priors = scan.priors
    inside = [h for h in scan.hits if scan.item.enclosing(h.line).name == function.name]
    active = [h for h in inside if prior_active(h.rule.tag, priors)]
    mine = [h for h in active if h.rule.family == family]
    enabled = [h for h in mine if h.rule.status == "enabled"]
    x: dict[str, Scalar] = {
        "qr.enabled_hits": min(len(enabled), 20),
        "qr.shadow_hits": min(len(mine) - len(enabled), 20),
        "qr.other_family_hits": min(len(active) - len(mine), 20),
        "qr.max_precision_estimate": max((h.rule.precision_estimate for h in enabled), default=0.0),
        "qr.prior_hits": min(sum(1 for h in inside if h.rule.tag is not None and h.rule.family == family), 10),
    }
    for mechanism in families().mechanisms:
        x[f"qr.mechanism.{mechanism}"] = min(sum(mechanism in h.rule.mechanisms for h in mine), 10)
    return x


_RANK = {"absent": 0, "low": 1, "medium": 2, "high": 3}


def _x_bandit(scan: _FileScan, function: Function, family: str) -> dict[str, Scalar]:
    inside = [i for i in scan.issues if scan.item.enclosing(i.line).name == function.name]
    mine = [i for i in inside if i.family == family]
    return {
        "bandit.issues": min(len(mine), 10),
        "bandit.other_issues": min(len(inside) - len(mine), 10),
        "bandit.max_severity": max((i.severity for i in mine), key=_RANK.__getitem__, default="absent"),
        "bandit.max_confidence": max((i.confidence for i in mine), key=_RANK.__getitem__, default="absent"),
    }


def _x_facts(graph: CallGraph, path: str, function: Function) -> dict[str, Scalar]:
    facts = graph.facts(path, function)
    return {
        "facts.callers": min(facts.callers, 40),
        "facts.caller_files": min(facts.caller_files, 20),
        "facts.entry_distance": facts.entry_distance,
        "facts.is_global": facts.is_global,
        "facts.function_lines": min(facts.function_lines, 500),
        "facts.params": min(facts.params, 10),
        "facts.decorated": facts.decorated,
    }


def _x_roles(roles: FunctionRoles, family: str) -> dict[str, Scalar]:
    operations = families().operations_of(family)
    sinks = [u for u in roles.uses if u.kind == "sink" and u.operation in operations]
    origin = "absent"
    if sinks:
        origin = min(sinks, key=lambda u: u.depth).origin
    return {
        "roles.sink_calls": min(len(sinks), 10),
        "roles.sink_depth_min": min((u.depth for u in sinks), default=None),
        "roles.sink_origin": origin,
        "roles.sink_confidence": max((u.confidence for u in sinks), default=0.0),
        "roles.sink_nonconstant": any(u.nonconstant for u in sinks),
        "roles.param_reaches_sink": any(u.param_reaches for u in sinks),
        "roles.is_wrapper": any(kind == "sink" and op in operations for kind, op in roles.wraps),
        "roles.sanitizer_in_function": any(u.kind == "sanitizer" and u.operation in operations for u in roles.uses),
        "roles.source_in_function": bool(roles.sources),
        "roles.source_kind": min(roles.sources) if roles.sources else "absent",
    }


_SOURCE_KINDS = frozenset({"parameter", "request", "environment", "argv_stdin"})


def _flows(item: ParsedFile, priors: Resolved) -> list[Flow]:
    """The file's flows whose source and sink are language-level, or priors that are switched on; a flow from a
    route's parameter whose framework is off is the parameter's flow (the same line read without the prior)."""
    found: dict[tuple[object, ...], Flow] = {}
    for flow in item.flows:
        kept = flow
        if not all(prior_active(tag, priors) for tag in flow.tags):
            if flow.route is None or not all(prior_active(t, priors) for t in flow.tags if t != flow.route):
                continue
            kept = replace(flow, source_kind=PARAMETER, tags=tuple(t for t in flow.tags if t != flow.route),
                           route=None)  # fmt: skip
        key = (kept.function, kept.operation, kept.sink_line, kept.source_kind, kept.source_line, kept.sanitized)
        found.setdefault(key, kept)
    return list(found.values())


def _function_flows(
    item: ParsedFile, function: Function, family: str, priors: Resolved
) -> tuple[list[Flow], list[Flow], list[Flow]]:
    """A function's flows, those of them that reach a sink of ``family``, and those of these left unsanitised."""
    by_operation = families().by_operation
    inside = [f for f in _flows(item, priors) if f.function == function.name]
    mine = [f for f in inside if by_operation.get(f.operation) == family]
    return inside, mine, [f for f in mine if not f.sanitized]


def _x_taint(item: ParsedFile, function: Function, family: str, priors: Resolved) -> dict[str, Scalar]:
    inside, mine, live = _function_flows(item, function, family, priors)
    kinds = sorted({f.source_kind for f in live}, key=lambda k: (k == "parameter", k))
    kind = kinds[0] if kinds else "absent"
    return {
        "taint.flows": min(len(live), 10),
        "taint.sanitized_flows": min(len(mine) - len(live), 10),
        "taint.source_kind": kind if kind in _SOURCE_KINDS or kind == "absent" else "other",
        "taint.external_source": any(f.source_kind != "parameter" for f in live),
        "taint.via_call": any(f.via_call for f in live),
        "taint.span_lines": min(50, *(abs(f.sink_line - f.source_line) for f in live)) if live else None,
        "taint.other_family_flows": min(sum(1 for f in inside if not f.sanitized) - len(live), 10),
    }


@dataclass(frozen=True)
class _Context:
    head: str
    base: str | None
    graph: CallGraph
    roles: Mapping[tuple[str, str], FunctionRoles]
    base_scans: Mapping[str, _FileScan]
    changed: Mapping[str, frozenset[int]] | None


def _taint_state(item: ParsedFile) -> InstrumentState:
    if vocabulary_of(item.language) is None:
        return InstrumentState(state=State.NONE, version=None)
    return InstrumentState(state=State.FAILED if item.has_errors else State.RAN, version=taint_version(item.language))


def analyse(
    repo: Path, head: str, base: str | None, repo_key: str, *, priors: Priors = "detected",
    within: tuple[str, ...] | None = None, exclude: tuple[str, ...] = (), tests: bool = True,
) -> list[Analysed]:  # fmt: skip
    """Candidates of a push ``base..head`` (or a scan of ``head`` when ``base`` is None), analysed.

    ``within``: repository-relative folders or files; only candidates under them count (the whole head is
    still parsed for the call graph and roles); ``exclude``: globs of paths whose candidates do not count
    (``decider.folder.excluded_by``); ``tests``: whether test code counts below a folder of ``within`` that is
    not test code itself nor in a test folder (``decider.folder.is_test_code``); ``priors``: which framework
    and library priors are on (``decider.frameworks``; ``detected``: what each file imports)."""
    git = GitRepo(repo)
    head_sha = git.resolve(head)
    base_sha = git.resolve(base) if base is not None else None
    parsed = parse_commit(git, head_sha)
    changed: dict[str, frozenset[int]] | None = None
    if base_sha is not None:
        changed = {f.path: f.lines for f in changed_lines(git, base_sha, head_sha) if f.path in parsed}
    targets = sorted(changed) if changed is not None else sorted(parsed)
    if within is not None:
        targets = [t for t in targets if any(_under(t, w) for w in within)]
    targets = [t for t in targets if excluded_by(t, exclude) is None]
    if not tests:
        given_tests = [w for w in within or ("",) if is_test_code((repo.resolve() / w).as_posix())]
        targets = [t for t in targets if not is_test_code(t) or any(_under(t, w) for w in given_tests)]
    base_parsed = parse_commit(git, base_sha, targets) if base_sha is not None else {}
    manifests = {}
    if priors == "detected":
        wanted = [p for p in git.files(head_sha) if is_manifest(p)]
        manifests = {p: data.decode("utf-8", "replace") for p, data in git.read(head_sha, wanted).items()}
    setting = _Setting(priors, declared(manifests))
    return _analyse_parsed(parsed, targets, head_sha, base_sha, base_parsed, changed, repo_key, setting)


def _under(path: str, folder: str) -> bool:
    return folder in ("", ".") or path == folder or path.startswith(folder.rstrip("/") + "/")


def analyse_folder(scan: FolderScan, repo_key: str, *, priors: Priors = "detected") -> list[Analysed]:
    """Candidates of the files a folder scan read from disk (no git needed; the pin is a content digest)."""
    setting = _Setting(priors, declared(scan.manifests) if priors == "detected" else {})
    return _analyse_parsed(scan.parsed, sorted(scan.parsed), scan.pin, None, {}, None, repo_key, setting)


@dataclass(frozen=True)
class _Setting:
    """The priors asked for and what the repository's manifests declare, per folder."""

    priors: Priors
    manifests: Mapping[str, frozenset[str]]

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
    parsed: Mapping[str, ParsedFile], targets: list[str], head_sha: str, base_sha: str | None,
    base_parsed: Mapping[str, ParsedFile], changed: Mapping[str, frozenset[int]] | None, repo_key: str,
    setting: _Setting,
) -> list[Analysed]:  # fmt: skip
    roles = infer_roles(parsed, setting.union(parsed.values()))
    scans = {path: _scan_file(parsed[path], setting.of(parsed[path])) for path in targets}
    base_scans = {path: _scan_file(item, setting.of(item)) for path, item in base_parsed.items()}
    by_function: dict[tuple[str, str], set[str]] = {}
    signals: dict[tuple[str, str], list[Signal]] = {}
    for path, scan in scans.items():
        for name, found in _signals(scan, roles).items():
            signals[(path, name)] = found
            by_function[(path, name)] = {signal.family for signal in found}
    context = _Context(head_sha, base_sha, build_call_graph(parsed), roles, base_scans, changed)
    chosen = select(repo_key, head_sha, {p: parsed[p] for p in targets}, by_function, changed)
    return [_analysed(context, scans[c.path], c, signals[(c.path, c.function)]) for c in chosen]


def candidates(
    repo: Path, head: str, base: str | None, repo_key: str, *, priors: Priors = "detected"
) -> list[Candidate]:
    """The candidate keys of a push or a scan (``analyse`` without the records)."""
    return [item.candidate for item in analyse(repo, head, base, repo_key, priors=priors)]


def _analysed(context: _Context, scan: _FileScan, candidate: Candidate, found: list[Signal]) -> Analysed:
    item, priors = scan.item, scan.priors
    function = next(f for f in item.functions if f.name == candidate.function)
    family = candidate.family
    lines = context.changed.get(item.path, frozenset()) if context.changed is not None else frozenset()
    inside = tuple(sorted(n for n in lines if item.enclosing(n).name == function.name))
    tree_state = State.FAILED if item.has_errors else State.RAN
    coverage = State.RAN if vocabulary(item.language, priors) else State.NONE
    instruments = {
        "lang": InstrumentState(state=State.RAN, version=_grammar_version()),
        "qr": scan.qr,
        "bandit": scan.bandit,
        "facts": InstrumentState(state=tree_state, version=_grammar_version()),
        "roles": InstrumentState(
            state=State.FAILED if item.has_errors else coverage, version=roles_version(item.language)
        ),
        "delta": delta_state(context.base),
        "taint": _taint_state(item),
    }
    function_roles = context.roles.get((item.path, function.name), FunctionRoles())
    x: dict[str, Scalar] = {f"lang.{language}": language == item.language for language in LANGUAGES}
    x |= _x_quick(scan, function, family)
    x |= _x_bandit(scan, function, family)
    x |= _x_facts(context.graph, item.path, function)
    x |= _x_roles(function_roles, family)
    x |= _x_taint(item, function, family, priors)
    base_code: str | None = None
    if context.base is not None:
        base_code, delta = _delta(context, scan, function, family, len(inside))
        x |= delta
    record = build_record(candidate, item.language, x, instruments, base=context.base)
    mine = sorted((s for s in found if s.family == family), key=lambda s: (s.line, s.instrument, s.rule))
    _inside, flows, _live = _function_flows(item, function, family, priors)
    return Analysed(
        candidate=candidate, language=item.language, record=record, signals=tuple(mine),
        roles=function_roles.describe(), code=item.source_of(function), start_line=function.start_line,
        end_line=function.end_line, changed_lines=inside, base_code=base_code,
        flows=tuple(sorted(flows, key=lambda f: (f.sanitized, f.sink_line, f.source_line))), priors=scan.priors_on,
    )  # fmt: skip


def _delta(
    context: _Context, scan: _FileScan, function: Function, family: str, changed: int
) -> tuple[str | None, dict[str, Scalar]]:
    """The function at the base of a push, and the delta features of the change."""
    item = scan.item
    base_scan = context.base_scans.get(item.path)
    base_fn = next((f for f in base_scan.item.functions if f.name == function.name), None) if base_scan else None
    operations = families().operations_of(family)
    vocab = vocabulary(item.language, scan.priors)
    sanitizers = [e for e in vocab if e.kind == "sanitizer" and e.operation in operations]
    delta = delta_facts(
        function, base_scan.item if base_scan else None,
        head_signals=_family_signal_count(scan, function, family),
        base_signals=_family_signal_count(base_scan, base_fn, family) if base_scan and base_fn else 0,
        changed=changed, sanitizers=sanitizers, head_file=item,
    )  # fmt: skip
    base_code = base_scan.item.source_of(base_fn) if base_scan and base_fn else None
    return base_code, {
        "delta.novelty": delta.novelty,
        "delta.changed_lines": delta.changed_lines,
        "delta.sanitizer_removed": delta.sanitizer_removed,
        "delta.tests": delta.tests,
    }
