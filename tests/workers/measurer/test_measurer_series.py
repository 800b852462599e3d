"""Each series on hand-built inputs, with the expected numbers worked out by hand in the test."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from datetime import date, timedelta

import pytest
from _measurer_events import runs_input, session, structure, t
from hypothesis import given
from hypothesis import strategies as st

from ouroboros_gates.schemas import Scope, SeriesPoint
from ouroboros_gates.workers.measurer import SERIES, MeasureInput, RunCounts, measure
from ouroboros_gates.workers.measurer.series import (
    compounding,
    findings,
    fixer_economics,
    fixer_spend,
    h_fleet,
    h_r_points,
    structure_exponent,
    structure_per_intervention,
    struggle_rate,
)

AT = "2026-11-30T12:00:00Z"


def only(points: list[SeriesPoint], **labels: str) -> SeriesPoint:
    found = [p for p in points if all(p.labels.get(k) == v for k, v in labels.items())]
    assert len(found) == 1, found
    return found[0]


# --- struggle rate --------------------------------------------------------------------------------


def test_daily_and_weekly_struggle_rate_by_hand() -> None:
    inp = runs_input(
        AT,
        ("r1", "2026-10-05T16:00:00Z", 200, 3),  # 09:00 PDT Monday 5 October
        ("r2", "2026-10-06T06:30:00Z", 100, 2),  # 23:30 PDT on the 5th, though the 6th in UTC
        ("r3", "2026-10-06T07:30:00Z", 50, 0),  # 00:30 PDT on the 6th
        ("r4", None, 10, 10),  # no start: belongs to no day
    )
    daily = struggle_rate(inp, "day")
    assert [p.labels["day"] for p in daily] == ["2026-10-05", "2026-10-06"]
    assert daily[0].value == pytest.approx(1000 * 5 / 300)  # 16.67 struggles per 1k calls
    assert daily[0].at == t("2026-10-05T07:00:00Z")  # local midnight, PDT
    assert daily[0].labels == {"day": "2026-10-05"}  # the period only: the ledger keys points by their labels
    assert daily[1].value == 0.0
    weekly = struggle_rate(inp, "week")
    assert len(weekly) == 1
    assert weekly[0].series == "ouroboros.struggle_rate_per_1k_tool_calls_weekly"
    assert weekly[0].value == pytest.approx(1000 * 5 / 350)
    assert weekly[0].labels["week"] == "2026-10-05"
    assert compounding(inp, "week").labels["runs_without_start"] == "1"


def test_zero_tool_calls_give_none_with_a_reason() -> None:
    inp = runs_input(AT, ("r1", "2026-10-07T17:00:00Z", 0, 0), ("r2", "2026-10-07T18:00:00Z", 0, 0))
    (point,) = struggle_rate(inp, "day")
    assert point.value is None
    assert point.reason == "no tool calls in the day of 2026-10-07 (2 run(s))"
    (weekly,) = struggle_rate(inp, "week")
    assert weekly.value is None
    assert weekly.reason == "no tool calls in the week of 2026-10-05 (2 run(s))"


def test_weeks_in_los_angeles_across_the_end_of_dst() -> None:
    # DST ends at 02:00 on Sunday 1 November 2026: the week of Monday 26 October starts at 07:00Z (PDT),
    # the week of Monday 2 November at 08:00Z (PST).
    inp = runs_input(
        AT,
        ("before", "2026-10-26T06:59:00Z", 10, 1),  # Sunday 25 Oct 23:59 PDT: the week of 19 October
        ("first", "2026-10-26T07:00:00Z", 10, 2),  # Monday 26 Oct 00:00 PDT
        ("last", "2026-11-02T07:59:00Z", 10, 3),  # Sunday 1 Nov 23:59 PST (00:59 on the 2nd at PDT's offset)
        ("next", "2026-11-02T08:00:00Z", 10, 4),  # Monday 2 Nov 00:00 PST
    )
    weekly = struggle_rate(inp, "week")
    assert [(p.labels["week"], p.at, p.value) for p in weekly] == [
        ("2026-10-19", t("2026-10-19T07:00:00Z"), 100.0),  # 1 struggle in 10 calls
        ("2026-10-26", t("2026-10-26T07:00:00Z"), 250.0),  # 2 + 3 in 20
        ("2026-11-02", t("2026-11-02T08:00:00Z"), 400.0),  # 4 in 10
    ]
    daily = struggle_rate(inp, "day")
    nov1 = only(daily, day="2026-11-01")
    assert nov1.at == t("2026-11-01T07:00:00Z")  # a 25-hour day: 07:00Z to 08:00Z the next day
    assert nov1.value == 300.0


def test_weeks_in_los_angeles_across_the_start_of_dst() -> None:
    # DST starts at 02:00 on Sunday 14 March 2027: Monday 8 March starts at 08:00Z, Monday 15 March at 07:00Z.
    inp = runs_input(AT, ("a", "2027-03-15T06:59:00Z", 10, 1), ("b", "2027-03-15T07:00:00Z", 10, 1))
    weekly = struggle_rate(inp, "week")
    assert [(p.labels["week"], p.at) for p in weekly] == [
        ("2027-03-08", t("2027-03-08T08:00:00Z")),
        ("2027-03-15", t("2027-03-15T07:00:00Z")),
    ]


# --- compounding ----------------------------------------------------------------------------------


def weekly_runs(rates: Sequence[float | None], calls: int = 1_000_000) -> MeasureInput:
    """One run per week from Monday 7 September 2026 at noon PDT; None is a week with no tool call."""
    runs = []
    for week, rate in enumerate(rates):
        started = t("2026-09-07T19:00:00Z") + timedelta(weeks=week)
        made = 0 if rate is None else calls
        errors = 0 if rate is None else round(rate * calls / 1000)
        runs.append(RunCounts(f"w{week}", started, made, errors))
    return MeasureInput(at=t(AT), runs=tuple(runs))


def test_compounding_recovers_a_known_weekly_decay() -> None:
    noise = random.Random(20261005)
    rates = [100 * 0.9**week * math.exp(noise.gauss(0, 0.05)) for week in range(16)]
    point = compounding(weekly_runs(rates), "week")
    assert point.series == "ouroboros.compounding_per_week"
    assert point.value == pytest.approx(-0.10, abs=0.015)
    assert point.low is not None and point.high is not None
    assert point.low < -0.10 < point.high
    assert point.labels["points"] == "16"
    assert point.labels["df"] == "14"


def test_compounding_of_an_exact_decay_is_exact() -> None:
    point = compounding(weekly_runs([100 * 0.9**week for week in range(10)], calls=10**12), "week")
    assert point.value == pytest.approx(-0.10, abs=1e-9)


@given(
    st.floats(1.0, 500.0),
    st.floats(0.7, 1.4),
    st.lists(st.integers(0, 30), min_size=3, max_size=15, unique=True),
)
def test_compounding_recovers_any_exact_exponential(base: float, factor: float, weeks: list[int]) -> None:
    rates: list[float | None] = [None] * (max(weeks) + 1)  # weeks without a run have no point at all
    for week in weeks:
        rates[week] = base * factor**week
    inp = weekly_runs(rates, calls=10**18)
    inp = MeasureInput(at=inp.at, runs=tuple(r for r in inp.runs if r.tool_calls))
    point = compounding(inp, "week")
    assert point.value == pytest.approx(factor - 1, abs=1e-6)


def test_compounding_excludes_zero_and_unmeasured_weeks_and_says_so() -> None:
    # weeks 0, 2, 3 fall by 0.8 a week (10, 6.4, 5.12); week 1 is 0 (no logarithm); week 4 made no tool call.
    point = compounding(weekly_runs([10.0, 0.0, 6.4, 5.12, None]), "week")
    assert point.value == pytest.approx(-0.2, abs=1e-9)
    assert point.labels["excluded_zero_rate"] == "1"
    assert point.labels["excluded_no_tool_calls"] == "1"
    assert point.labels["points"] == "3"
    assert point.labels["df"] == "1"


def test_compounding_with_too_few_points_is_none_with_the_reason() -> None:
    point = compounding(weekly_runs([10.0, 0.0, 8.0]), "week")
    assert point.value is None and point.low is None
    assert (
        point.reason == "too few points: 2 point(s); a slope with an interval needs 3 (1 zero-rate excluded)"
    )
    empty = compounding(MeasureInput(at=t(AT)), "day")
    assert empty.value is None
    assert empty.reason == "too few points: 0 point(s); a slope with an interval needs 3"


def test_compounding_per_day_steps_calendar_days_across_dst() -> None:
    # Noon local from 30 October to 3 November 2026; 1 November has 25 hours, but it is one step.
    starts = [
        "2026-10-30T19:00:00Z",
        "2026-10-31T19:00:00Z",
        "2026-11-01T20:00:00Z",
        "2026-11-02T20:00:00Z",
        "2026-11-03T20:00:00Z",
    ]
    runs = tuple(RunCounts(f"d{i}", t(s), 10**12, round(10**11 * 0.9**i)) for i, s in enumerate(starts))
    point = compounding(MeasureInput(at=t(AT), runs=runs), "day")
    assert point.series == "ouroboros.compounding_per_day"
    assert point.value == pytest.approx(-0.10, abs=1e-9)


# --- structure ------------------------------------------------------------------------------------


def structure_input() -> MeasureInput:
    return MeasureInput(
        at=t(AT),
        structure=(
            structure("miner", "a", "2026-10-06T18:00:00Z"),  # week of 5 October
            structure("ticket", "7", "2026-10-08T18:00:00Z"),
            structure("ticket", "8", "2026-10-13T18:00:00Z"),  # week of 12 October
            structure("miner", "b", "2026-10-20T18:00:00Z"),  # week of 19 October
            structure("ticket", "9", "2026-10-21T18:00:00Z"),
            structure("ticket", "10", "2026-10-22T18:00:00Z"),
        ),
        sessions=(
            *(  # four sessions ending 6 to 9 October
                session(n, f"2026-10-0{n + 5}T15:00:00Z", f"2026-10-0{n + 5}T17:00:00Z", 1.0, n % 2 == 0)
                for n in range(1, 5)
            ),
            session(20, "2026-10-19T15:00:00Z", "2026-10-19T17:00:00Z", 1.0, True),
            session(21, "2026-10-25T15:00:00Z", "2026-10-25T17:00:00Z", 1.0, False),
        ),
    )


def test_structure_per_intervention_by_hand() -> None:
    points = structure_per_intervention(structure_input())
    assert [(p.labels["week"], p.value) for p in points] == [
        ("2026-10-05", 2 / 4),  # 1 miner + 1 ticket over 4 sessions
        ("2026-10-12", None),
        ("2026-10-19", 3 / 2),  # 1 miner + 2 tickets over 2 sessions
    ]
    assert (
        points[1].reason == "no fixer session ended in the week of 2026-10-12 (0 miner(s) accepted, 1 closed)"
    )
    assert points[0].labels == {"week": "2026-10-05"}
    assert points[0].at == t("2026-10-05T07:00:00Z")


def test_structure_exponent_by_hand() -> None:
    # cumulative (sessions, structure) at the end of each active week: (4, 2), (4, 3), (6, 6).
    xs = [math.log(4), math.log(4), math.log(6)]
    ys = [math.log(2), math.log(3), math.log(6)]
    mx, my = sum(xs) / 3, sum(ys) / 3
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)
    point = structure_exponent(structure_input())
    assert point.value == pytest.approx(slope)
    assert point.labels["points"] == "3" and point.labels["df"] == "1"
    assert point.low is not None and point.high is not None and point.low < slope < point.high


def test_structure_exponent_of_a_power_law() -> None:
    # cumulative sessions k^2 and structure k^3 in week k: the exponent is exactly 1.5.
    weeks = ["2026-10-05", "2026-10-12", "2026-10-19", "2026-10-26"]
    pieces, sessions = [], []
    for k, monday in enumerate(weeks, start=1):
        for i in range(k**3 - (k - 1) ** 3):
            pieces.append(structure("ticket", f"{k}-{i}", f"{monday}T18:00:00Z"))
        for i in range(k**2 - (k - 1) ** 2):
            sessions.append(session(100 * k + i, f"{monday}T15:00:00Z", f"{monday}T17:00:00Z", 1.0, False))
    point = structure_exponent(MeasureInput(at=t(AT), structure=tuple(pieces), sessions=tuple(sessions)))
    assert point.value == pytest.approx(1.5, abs=1e-9)


def test_structure_exponent_with_too_few_points() -> None:
    inp = MeasureInput(at=t(AT), structure=(structure("miner", "a", "2026-10-06T18:00:00Z"),))
    point = structure_exponent(inp)
    assert point.value is None
    assert point.reason == "too few points: 0 point(s); a slope with an interval needs 3"


# --- findings, spend, yield -----------------------------------------------------------------------


def test_findings_by_scope_with_zeros() -> None:
    inp = MeasureInput(at=t(AT), findings=(("a", Scope.GENERIC), ("b", Scope.GENERIC), ("c", Scope.GENERIC)))
    points = findings(inp)
    assert {p.labels["scope"]: p.value for p in points} == {"generic": 3.0, "tenant": 0.0}


def spend_input() -> MeasureInput:
    return MeasureInput(
        at=t(AT),
        sessions=(
            session(1, "2026-10-05T06:00:00Z", "2026-10-05T09:00:00Z", 1.25, False),  # 23:00 PDT on the 4th
            session(2, "2026-10-05T08:00:00Z", "2026-10-05T09:00:00Z", 2.50, True),  # 01:00 PDT on the 5th
            session(3, "2026-10-05T20:00:00Z", "2026-10-06T09:00:00Z", 0.25, True),
        ),
    )


def test_fixer_spend_per_los_angeles_day_of_start() -> None:
    points = fixer_spend(spend_input())
    assert [(p.labels["day"], p.value) for p in points] == [("2026-10-04", 1.25), ("2026-10-05", 2.50 + 0.25)]
    assert points[1].at == t("2026-10-05T07:00:00Z")


def test_cost_per_ready_pull_request_and_yield() -> None:
    per_ready, yield_ = fixer_economics(spend_input())
    assert per_ready.series == "ouroboros.cost_per_ready_pull_request_usd"
    assert per_ready.value == pytest.approx(4.0 / 2)
    assert yield_.series == "ouroboros.fixer_yield"
    assert yield_.value == pytest.approx(2 / 3)


def test_no_ready_pull_request_and_no_session() -> None:
    one = MeasureInput(at=t(AT), sessions=spend_input().sessions[:1])
    per_ready, yield_ = fixer_economics(one)
    assert per_ready.value is None
    assert per_ready.reason == "no ready pull request among 1 fixer session(s) ($1.25 spent)"
    assert yield_.value == 0.0
    per_ready, yield_ = fixer_economics(MeasureInput(at=t(AT)))
    assert per_ready.value is None and yield_.value is None
    assert yield_.reason == "no fixer session has ended"


# --- h_fleet --------------------------------------------------------------------------------------


def h_input() -> MeasureInput:
    return MeasureInput(
        at=t(AT),
        runs=(
            RunCounts("A", None, 0, 0, cache_read=900, prompt_tokens=1000),  # h_r 0.9
            RunCounts("B", None, 0, 0, cache_read=9900, prompt_tokens=10000),  # 0.99, above the floor
            RunCounts("C", None, 0, 0),  # no prompt tokens: no h_r
            RunCounts("D", None, 0, 0, cache_read=0, prompt_tokens=10),  # 0.0
        ),
    )


def test_h_fleet_and_ranked_offenders() -> None:
    point = h_fleet(h_input())
    assert point.value == 10800 / 11010
    assert point.labels == {"runs": "4", "runs_with_usage": "3", "offenders": "2", "floor": "0.9867"}
    ranked = h_r_points(h_input())
    assert [(p.labels["run"], p.labels["rank"], p.value) for p in ranked] == [
        ("D", "1", 0.0),
        ("A", "2", 0.9),
    ]


def test_h_fleet_without_prompt_tokens_is_none() -> None:
    point = h_fleet(MeasureInput(at=t(AT), runs=(RunCounts("C", None, 0, 0),)))
    assert point.value is None
    assert point.reason == "no prompt tokens in 1 run(s)"


# --- everything -----------------------------------------------------------------------------------


def test_measure_emits_every_series_in_order() -> None:
    inp = MeasureInput(
        at=t(AT),
        runs=weekly_runs([10.0, 8.0, 6.4]).runs + h_input().runs,
        sessions=structure_input().sessions,
        structure=structure_input().structure,
        findings=(("a", Scope.TENANT),),
    )
    points = measure(inp)
    names = list(dict.fromkeys(p.series for p in points))
    assert names == list(SERIES)
    assert all(p.at.tzinfo is not None for p in points)


@given(st.lists(st.tuples(st.integers(0, 400), st.integers(0, 50), st.integers(0, 50)), max_size=30))
def test_a_week_is_a_weighted_mean_of_its_days(runs: list[tuple[int, int, int]]) -> None:
    base = t("2026-10-01T00:00:00Z")  # runs every 6 hours for 100 days, across the end of DST
    inp = MeasureInput(
        at=t(AT),
        runs=tuple(
            RunCounts(f"r{i}", base + timedelta(hours=6 * h), c, min(e, c))
            for i, (h, c, e) in enumerate(runs)
        ),
    )
    daily = struggle_rate(inp, "day")
    for week in struggle_rate(inp, "week"):
        monday = date.fromisoformat(week.labels["week"])
        days = [p.value for p in daily if 0 <= (date.fromisoformat(p.labels["day"]) - monday).days < 7]
        measured = [v for v in days if v is not None]
        assert days, "a week has a point only if one of its days has"
        if not measured:
            assert week.value is None and week.reason
        else:
            assert week.value is not None
            assert min(measured) - 1e-9 <= week.value <= max(measured) + 1e-9
