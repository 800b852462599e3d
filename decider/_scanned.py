"""One file as the instruments read it, and the features of a (function, family) in it.

``scan_file`` runs the per-file instruments (quick rules, Bandit) with the priors on for that file;
``signals`` are what raises a candidate; ``x_*`` build each instrument's block of the feature record
(``decider/features.py`` allow-lists them).
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from importlib import metadata
from itertools import chain

from ouroboros_gates.decider.frameworks import Resolved, frameworks
from ouroboros_gates.decider.instruments import (
    BanditIssue,
    CallGraph,
    FunctionRoles,
    QuickHit,
    QuickRule,
    RoleUse,
    Signal,
    bandit_scan,
    families,
    prior_active,
    quick_scan,
)
from ouroboros_gates.decider.instruments.taint import PARAMETER, Flow, taint_version, vocabulary_of
from ouroboros_gates.decider.languages import Function, ParsedFile
from ouroboros_gates.schemas import InstrumentState, Scalar, State

__all__ = [
    "FileScan",
    "family_signal_count",
    "function_flows",
    "grammar_version",
    "scan_file",
    "signals",
    "taint_state",
    "x_bandit",
    "x_facts",
    "x_quick",
    "x_roles",
    "x_taint",
]


@dataclass(frozen=True)
class FileScan:
    """One file with its quick-rule hits, Bandit issues and the priors on for it."""

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

    def hits_in(self, function: Function) -> list[QuickHit]:
        """The quick-rule hits inside one function."""
        return [h for h in self.hits if self.item.enclosing(h.line).name == function.name]

    def issues_in(self, function: Function) -> list[BanditIssue]:
        """Bandit's issues inside one function."""
        return [i for i in self.issues if self.item.enclosing(i.line).name == function.name]


GRAMMARS = (
    "tree-sitter",
    *(f"tree-sitter-{lang}" for lang in ("c", "cpp", "java", "javascript", "php", "python", "typescript")),
)
"""The distributions whose versions make the parsers' version: named, not discovered, so that whatever else
lies on ``sys.path`` (another environment's site-packages, a folder listed twice) never changes it."""


@cache
def grammar_version() -> str:
    versions = [f"{name}=={metadata.version(name)}" for name in sorted(GRAMMARS)]
    return hashlib.sha256("\n".join(versions).encode()).hexdigest()


def scan_file(item: ParsedFile, priors: Resolved) -> FileScan:
    hits, qr = quick_scan(item.language, item.lines)
    issues, bandit = bandit_scan(item.language, "\n".join(item.lines).encode("utf-8"))
    return FileScan(item=item, hits=tuple(hits), qr=qr, issues=tuple(issues), bandit=bandit, priors=priors)


def signals(scan: FileScan, roles: Mapping[tuple[str, str], FunctionRoles]) -> dict[str, list[Signal]]:
    """Signals per function name of one file."""
    found: dict[str, list[Signal]] = {}
    for name, signal in chain(_rule_signals(scan), _taint_signals(scan), _role_signals(scan, roles)):
        found.setdefault(name, []).append(signal)
    return found


def _rule_signals(scan: FileScan) -> Iterator[tuple[str, Signal]]:
    """The enabled quick rules' hits whose prior is on, then Bandit's issues, each with its function."""
    item, priors = scan.item, scan.priors
    for hit in scan.hits:
        rule = hit.rule
        if _raises(rule, priors):
            signal = Signal(
                "qr", rule.id, rule.family, hit.line, rule.message, rule.mechanisms, rule.precision_estimate
            )
            yield item.enclosing(hit.line).name, signal
    for issue in scan.issues:
        yield (
            item.enclosing(issue.line).name,
            Signal("bandit", issue.test_id, issue.family, issue.line, issue.text),
        )


def _raises(rule: QuickRule, priors: Resolved) -> bool:
    """Whether a quick rule raises signals: enabled (not shadow), with its prior on."""
    return rule.status == "enabled" and prior_active(rule.tag, priors)


def _taint_signals(scan: FileScan) -> Iterator[tuple[str, Signal]]:
    """The taint step's flows that reach a sink of a family unsanitised."""
    by_operation = families().by_operation
    for flow in _flows(scan.item, scan.priors):
        family = by_operation.get(flow.operation)
        if family is not None and not flow.sanitized:
            yield (
                flow.function,
                Signal("taint", f"taint.{flow.sink}", family, flow.sink_line, flow.describe()),
            )


def _role_signals(
    scan: FileScan, roles: Mapping[tuple[str, str], FunctionRoles]
) -> Iterator[tuple[str, Signal]]:
    """Each function's own sinks (not a wrapper's) a parameter or a source reaches (in a file that parses)."""
    item = scan.item
    if item.has_errors:
        return
    for function in item.functions:
        function_roles = roles.get((item.path, function.name), FunctionRoles())
        for use in function_roles.uses:
            signal = _role_signal(use, function_roles, scan.priors)
            if signal is not None:
                yield function.name, signal


def _role_signal(use: RoleUse, function_roles: FunctionRoles, priors: Resolved) -> Signal | None:
    family = families().by_operation.get(use.operation)
    reached = _reached(use, function_roles)
    active = prior_active(use.tag, priors)
    if _own_sink(use) and reached and family is not None and active:
        message = f"{use.operation} sink ({use.origin}) reached by a parameter or a source"
        return Signal("roles", use.entry, family, use.line, message)
    return None


def _own_sink(use: RoleUse) -> bool:
    """Whether the use is a sink the function calls itself (not one a wrapper it calls holds)."""
    return use.kind == "sink" and use.depth == 0


def _reached(use: RoleUse, function_roles: FunctionRoles) -> bool:
    """Whether a parameter reaches the use, or a non-constant argument does in a function with a source."""
    return use.param_reaches or (use.nonconstant and bool(function_roles.sources))


def family_signal_count(scan: FileScan, function: Function, family: str) -> int:
    """The family's signals in one function, for novelty: enabled quick-rule hits, Bandit issues, and the
    taint step's flows that reach a sink of the family unsanitised."""
    priors = scan.priors
    count = sum(
        1 for hit in scan.hits_in(function) if hit.rule.family == family and _raises(hit.rule, priors)
    )
    count += sum(1 for i in scan.issues_in(function) if i.family == family)
    _inside, _mine, live = function_flows(scan.item, function, family, priors)
    return count + len(live)


def x_quick(scan: FileScan, function: Function, family: str) -> dict[str, Scalar]:
    inside = scan.hits_in(function)
    active = [h for h in inside if prior_active(h.rule.tag, scan.priors)]
    mine = [h for h in active if h.rule.family == family]
    enabled = _enabled(mine)
    x: dict[str, Scalar] = {
        "qr.enabled_hits": min(len(enabled), 20),
        "qr.shadow_hits": min(len(mine) - len(enabled), 20),
        "qr.other_family_hits": min(len(active) - len(mine), 20),
        "qr.max_precision_estimate": max((h.rule.precision_estimate for h in enabled), default=0.0),
        "qr.prior_hits": min(_prior_hits(inside, family), 10),
    }
    return x | _mechanism_hits(mine)


def _enabled(hits: Sequence[QuickHit]) -> list[QuickHit]:
    """The hits of enabled rules (not those of shadow rules)."""
    return [h for h in hits if h.rule.status == "enabled"]


def _mechanism_hits(hits: Sequence[QuickHit]) -> dict[str, Scalar]:
    """Per mechanism of the families' vocabulary, the hits whose rule names it."""
    return {
        f"qr.mechanism.{mechanism}": min(sum(mechanism in h.rule.mechanisms for h in hits), 10)
        for mechanism in families().mechanisms
    }


def _prior_hits(hits: Sequence[QuickHit], family: str) -> int:
    """Hits of the family's rules that belong to a framework or library prior."""
    return sum(1 for h in hits if h.rule.tag is not None and h.rule.family == family)


_RANK = {"absent": 0, "low": 1, "medium": 2, "high": 3}


def x_bandit(scan: FileScan, function: Function, family: str) -> dict[str, Scalar]:
    inside = scan.issues_in(function)
    mine = [i for i in inside if i.family == family]
    return {
        "bandit.issues": min(len(mine), 10),
        "bandit.other_issues": min(len(inside) - len(mine), 10),
        "bandit.max_severity": max((i.severity for i in mine), key=_RANK.__getitem__, default="absent"),
        "bandit.max_confidence": max((i.confidence for i in mine), key=_RANK.__getitem__, default="absent"),
    }


def x_facts(graph: CallGraph, path: str, function: Function) -> dict[str, Scalar]:
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


def x_roles(roles: FunctionRoles, family: str) -> dict[str, Scalar]:
    operations = families().operations_of(family)
    sinks = [u for u in roles.uses if u.kind == "sink" and u.operation in operations]
    return _sink_features(sinks) | {
        "roles.is_wrapper": _wraps(roles, "sink", operations),
        "roles.sanitizer_in_function": _uses(roles, "sanitizer", operations),
        "roles.source_in_function": bool(roles.sources),
        "roles.source_kind": min(roles.sources) if roles.sources else "absent",
    }


def _sink_features(sinks: Sequence[RoleUse]) -> dict[str, Scalar]:
    """What the function's sinks of the family say: how many, how deep, where from, how sure."""
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
    }


def _wraps(roles: FunctionRoles, kind: str, operations: Collection[str]) -> bool:
    """Whether the function wraps a ``kind`` (sink, sanitiser) of one of the operations."""
    return any(k == kind and op in operations for k, op in roles.wraps)


def _uses(roles: FunctionRoles, kind: str, operations: Collection[str]) -> bool:
    """Whether the function itself calls a ``kind`` of one of the operations."""
    return any(u.kind == kind and u.operation in operations for u in roles.uses)


_SOURCE_KINDS = frozenset({"parameter", "request", "environment", "argv_stdin"})


def _flows(item: ParsedFile, priors: Resolved) -> list[Flow]:
    """The file's flows whose source and sink are language-level, or priors that are switched on; a flow from
    a route's parameter whose framework is off is the parameter's flow (the same line read without the
    prior)."""
    found: dict[tuple[object, ...], Flow] = {}
    for flow in item.flows:
        kept = _as_read(flow, priors)
        if kept is None:
            continue
        key = (
            kept.function,
            kept.operation,
            kept.sink_line,
            kept.source_kind,
            kept.source_line,
            kept.sanitized,
        )
        found.setdefault(key, kept)
    return list(found.values())


def _as_read(flow: Flow, priors: Resolved) -> Flow | None:
    """The flow as the priors switched on read it: itself, its parameter's flow when only its route's
    framework is off, or None."""
    if all(prior_active(tag, priors) for tag in flow.tags):
        return flow
    if _only_route_off(flow, priors):
        return _parameter_flow(flow)
    return None


def _only_route_off(flow: Flow, priors: Resolved) -> bool:
    """Whether the flow comes from a route whose framework is off, every other prior of it being on."""
    return flow.route is not None and all(prior_active(t, priors) for t in flow.tags if t != flow.route)


def _parameter_flow(flow: Flow) -> Flow:
    """The flow read without its route's prior: from the route function's parameter."""
    return replace(
        flow, source_kind=PARAMETER, tags=tuple(t for t in flow.tags if t != flow.route), route=None
    )


def function_flows(
    item: ParsedFile, function: Function, family: str, priors: Resolved
) -> tuple[list[Flow], list[Flow], list[Flow]]:
    """A function's flows, those of them that reach a sink of ``family``, and those of these left
    unsanitised."""
    by_operation = families().by_operation
    inside = [f for f in _flows(item, priors) if f.function == function.name]
    mine = [f for f in inside if by_operation.get(f.operation) == family]
    return inside, mine, [f for f in mine if not f.sanitized]


def x_taint(item: ParsedFile, function: Function, family: str, priors: Resolved) -> dict[str, Scalar]:
    inside, mine, live = function_flows(item, function, family, priors)
    return {
        "taint.flows": min(len(live), 10),
        "taint.sanitized_flows": min(len(mine) - len(live), 10),
        "taint.source_kind": _source_kind(live),
        "taint.external_source": any(f.source_kind != "parameter" for f in live),
        "taint.via_call": any(f.via_call for f in live),
        "taint.span_lines": _span_lines(live),
        "taint.other_family_flows": min(sum(1 for f in inside if not f.sanitized) - len(live), 10),
    }


def _span_lines(live: Sequence[Flow]) -> int | None:
    """The shortest source-to-sink span of the live flows, at most 50; None without a live flow."""
    return min(50, *(abs(f.sink_line - f.source_line) for f in live)) if live else None


def _source_kind(live: Sequence[Flow]) -> str:
    """The kind of the live flows' source, an outside one first; ``other`` for a kind features do not name."""
    kinds = sorted({f.source_kind for f in live}, key=lambda k: (k == "parameter", k))
    kind = kinds[0] if kinds else "absent"
    return kind if kind in _SOURCE_KINDS or kind == "absent" else "other"


def taint_state(item: ParsedFile) -> InstrumentState:
    if vocabulary_of(item.language) is None:
        return InstrumentState(state=State.NONE, version=None)
    return InstrumentState(
        state=State.FAILED if item.has_errors else State.RAN, version=taint_version(item.language)
    )
