"""What the taint step proved about a candidate, and how that bounds its score (docs/decider.md, "Evidence").

A *live* flow is external input (request data, the command line, stdin) reaching a sink of the candidate's
family with no sanitiser, validator, constant or argument vector on its path: the candidate is reported at
ADVISORY at least, whatever its neighbours say (they may raise it, never drop it). A *guarded* candidate is
one whose every signal of the family sits on a sink the taint step saw reached only through a guard (a
sanitiser, a validating condition or allow-list, an argument vector, or constants alone): it scores below a
candidate without the guard and is not reported. Anything else (a parameter's flow, a signal no flow
explains) is left to the program.

The score is moved monotonically so that, within a family, every live candidate ranks above every guarded one
and an evaluation measures exactly what is deployed: live ``0.5 + s / 2``, guarded ``s / 2``, otherwise ``s``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from ouroboros_gates.decider.instruments.taint import CONSTANT, Flow

__all__ = ["EXTERNAL", "GUARDED_MARGIN", "Evidence", "evidence_of"]

EXTERNAL = frozenset({"request", "argv_stdin"})
"""Source kinds that are input from outside the program (a parameter or the environment is not, alone)."""

GUARDED_MARGIN = 0.05
"""A guarded candidate's p sits at least this far below its family's ADVISORY threshold."""

Kind = Literal["live", "guarded", "none"]

_SAID = {
    "request": "request data",
    "argv_stdin": "command-line or console input",
    "parameter": "a parameter",
    "environment": "the environment",
    CONSTANT: "constants",
}


@dataclass(frozen=True)
class Evidence:
    """The kind of evidence a candidate has and the flows that show it."""

    kind: Kind
    flows: tuple[Flow, ...] = ()

    def adjust(self, score: float) -> float:
        """The score moved by the evidence: live into [0.5, 1], guarded into [0, 0.5]."""
        if self.kind == "live":
            return 0.5 + score / 2
        if self.kind == "guarded":
            return score / 2
        return score

    def said(self) -> str:
        """One sentence naming the source, the sink and the lines between (empty without evidence)."""
        if self.kind == "none" or not self.flows:
            return ""
        if self.kind == "live":
            return _live_said(self.flows)
        return _guarded_said(self.flows)


def _live_said(flows: Sequence[Flow]) -> str:
    """The first live flow's source, sink and the lines between, and how many more there are."""
    first = flows[0]
    more = f" (and {len(flows) - 1} more flow(s))" if len(flows) > 1 else ""
    sink = f"{first.call} ({first.operation}) at line {first.sink_line}{_between(first)}"
    return (
        f"{_source(first)} reaches {sink} with no sanitiser, validator or allow-list on its "
        f"path{more}: "
        "reported at ADVISORY at least."
    )


def _guarded_said(flows: Sequence[Flow]) -> str:
    """Every guarded sink of the family, and what guards them."""
    sinks = ", ".join(sorted({f"{f.call} at line {f.sink_line}" for f in flows}))
    return (
        f"Every sink of the family here ({sinks}) is reached only through a sanitiser, a validating "
        f"condition or allow-list, an argument vector or constants: scored below ADVISORY."
    )


def _source(flow: Flow) -> str:
    what = _SAID.get(flow.source_kind, flow.source_kind)
    named = f" `{flow.source}`" if flow.source and flow.source_kind != CONSTANT else ""
    return f"{what[0].upper()}{what[1:]}{named} (line {flow.source_line})"


def _between(flow: Flow) -> str:
    """``, through lines 4, 6,`` (the assignments it went through), or nothing."""
    steps = _assignments(flow)
    if steps:
        return f", through line{'s' if len(steps) > 1 else ''} {', '.join(str(n) for n in steps)},"
    return ""


def _assignments(flow: Flow) -> list[int]:
    """The lines of the assignments a flow went through, its source's and sink's left out."""
    return [n for n in flow.steps if n not in (flow.source_line, flow.sink_line)]


def evidence_of(flows: Sequence[Flow], signal_lines: Iterable[int]) -> Evidence:
    """The evidence of a candidate with these flows of its family and its family's signals at these lines."""
    live = _live(flows)
    if live:
        return Evidence("live", live)
    guarded = tuple(f for f in flows if f.sanitized)
    if _all_guarded(guarded, flows, signal_lines):
        return Evidence("guarded", guarded)
    return Evidence("none")


def _all_guarded(guarded: Sequence[Flow], flows: Sequence[Flow], signal_lines: Iterable[int]) -> bool:
    """Whether every flow is guarded and every signal's line is a guarded sink's."""
    covered = {f.sink_line for f in guarded}
    return bool(guarded) and len(guarded) == len(flows) and set(signal_lines) <= covered


def _live(flows: Sequence[Flow]) -> tuple[Flow, ...]:
    """The flows from input outside the program (``EXTERNAL``) that reach their sink unguarded."""
    return tuple(f for f in flows if not f.sanitized and f.source_kind in EXTERNAL)
