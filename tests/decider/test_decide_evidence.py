"""The vote respects evidence: a live flow from external input is ADVISORY at least whatever the neighbours
say, the same sink behind a guard scores lower and is dropped, and a reported candidate never says
not_vulnerable."""

from __future__ import annotations

from dataclasses import replace

from _decider_support import COLUMNS, item, memory

from ouroboros_gates.decider.decide import Engine, decide_all
from ouroboros_gates.decider.evidence import evidence_of
from ouroboros_gates.decider.instruments.taint import CONSTANT, Flow
from ouroboros_gates.decider.program import OperatingPoint, Program
from ouroboros_gates.schemas import Action

VOTE = Program(kind="memory-vote", operating_points={"*": OperatingPoint(advisory=0.5)})


def flow(
    kind: str = "request", sanitized: bool = False, sink_line: int = 12, steps: tuple[int, ...] = ()
) -> Flow:
    return Flow(
        "search",
        "sql",
        "sql.dbapi",
        sink_line,
        "db.execute",
        kind,
        10,
        sanitized=sanitized,
        source="request.args" if kind == "request" else "q",
        steps=steps,
    )


def test_a_live_flow_from_request_data_is_advisory_even_when_every_neighbour_is_safe() -> None:
    safe_only = memory(8)
    safe_only = type(safe_only)(
        e for e in safe_only.examples if e.y == 0
    )  # four safe neighbours, no vulnerable one
    cold = item("search", hits=0)
    (without,) = decide_all([cold], Engine(VOTE, safe_only, COLUMNS)).decided
    assert without.decision.action is Action.DROP and without.decision.verdict == "not_vulnerable"
    live = replace(cold, flows=(flow(steps=(11,)),))
    (with_flow,) = decide_all([live], Engine(VOTE, safe_only, COLUMNS)).decided
    d = with_flow.decision
    assert d.action is Action.ADVISORY and d.verdict == "vulnerable" and d.evidence == "live"
    assert d.p is not None and d.p >= 0.5
    assert d.rationale.startswith(
        "Request data `request.args` (line 10) reaches db.execute (sql) at line 12, through line 11, with no "
        "sanitiser, validator or allow-list on its path: reported at ADVISORY at least."
    )
    assert with_flow.raw_score is not None and without.raw_score is not None
    assert with_flow.raw_score > without.raw_score  # the score moved, not only the action


def test_a_parameter_flow_alone_is_no_evidence_the_neighbours_decide() -> None:
    assert evidence_of([flow(kind="parameter")], [12]).kind == "none"
    assert evidence_of([flow(kind="environment")], [12]).kind == "none"
    assert evidence_of([flow(kind="argv_stdin")], [12]).kind == "live"


def test_the_same_sink_behind_a_guard_scores_lower_and_is_dropped() -> None:
    hot = item("search", hits=1)  # neighbours: the vulnerable examples are nearest
    live = replace(hot, flows=(flow(),))
    guarded = replace(hot, flows=(flow(sanitized=True, sink_line=11),))
    constant = replace(hot, flows=(flow(kind=CONSTANT, sanitized=True, sink_line=11),))
    run = decide_all([hot, live, guarded, constant], Engine(VOTE, memory(), COLUMNS))
    plain, lit, shielded, fixed = run.decided
    assert plain.decision.action is Action.ADVISORY  # the neighbours alone report it
    assert shielded.decision.action is Action.DROP and shielded.decision.evidence == "guarded"
    assert fixed.decision.action is Action.DROP and fixed.decision.verdict == "not_vulnerable"
    scores = [d.raw_score or 0.0 for d in (lit, plain, shielded)]
    assert scores == sorted(scores, reverse=True) and scores[0] > scores[2]
    assert "reached only through a sanitiser" in shielded.decision.rationale


def test_a_guard_on_one_sink_says_nothing_of_another_signal_in_the_function() -> None:
    # the family's signal at line 11 has a guarded flow; a second signal at line 14 has none: no evidence
    assert evidence_of([flow(sanitized=True, sink_line=11)], [11]).kind == "guarded"
    assert evidence_of([flow(sanitized=True, sink_line=11)], [11, 14]).kind == "none"
    assert evidence_of([flow(sanitized=True, sink_line=11), flow(kind="parameter")], [11]).kind == "none"


def test_an_advisory_never_carries_the_verdict_not_vulnerable() -> None:
    low = Program(kind="memory-vote", operating_points={"*": OperatingPoint(advisory=0.2)})
    (d,) = decide_all([item("safe", hits=0)], Engine(low, memory(), COLUMNS)).decided
    assert d.decision.action is Action.ADVISORY and d.raw_score is not None and d.raw_score < 0.5
    assert d.decision.verdict == "unsure"
