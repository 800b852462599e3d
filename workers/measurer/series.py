"""The measured series: pure functions from a ``MeasureInput`` to ``SeriesPoint``s (no Celery, no SQL).

Days and weeks are calendar periods in America/Los_Angeles (the zone is a parameter); a week starts on
Monday at local midnight. A period point's ``at`` is its start as a UTC instant, and its labels name it
(``day`` or ``week``, the local date) and nothing else, because the ledger keys a point by (series, at,
labels): a count in a period point's labels would leave a stale row behind each time a late run changed
it. Every other point's ``at`` is the instant measured, and its labels also carry what it was computed
from (points used and excluded, df, method). A point that cannot be measured has value None and says
why; nothing ever divides by zero. Periods with no data have no point (a missing day is not a zero).

- ``ouroboros.struggle_rate_per_1k_tool_calls``: per LA day, 1000 x Σ tool_errors / Σ tool_calls over the
  runs whose ``started_at`` falls on that day (the ``RunRecorded`` summaries; a struggle is a tool call
  whose result is an error or a gate denial); None when those runs made no tool call. A run without a
  ``started_at`` belongs to no day and is counted in the compounding points' ``runs_without_start``.
- ``ouroboros.struggle_rate_per_1k_tool_calls_weekly``: the same per LA week (Monday to Sunday).
- ``ouroboros.compounding_per_week``: exp(b) - 1, where b is the OLS slope of ln(weekly rate) on the week's
  index (whole weeks since the first week with a point), with the 95% interval exp(b ± t(0.975; n-2) SE(b))
  - 1; weeks whose rate is 0 (no logarithm) or None are excluded and counted in the labels; fewer than 3
  usable weeks gives None with the reason. Negative means struggles shrink: -0.10 is 10% fewer a week.
- ``ouroboros.compounding_per_day``: the same over the daily rate, per day (calendar days, so a 23- or
  25-hour DST day is one step).
- ``ouroboros.structure_per_intervention``: per LA week, (miners accepted + tickets closed in that week) /
  (fixer sessions ended in that week); structure is dated by its first ``MinerAccepted`` or
  ``TicketClosed`` event's recording time, a session by its ``ended``; None with the reason when no
  session ended that week.
- ``ouroboros.structure_exponent``: the OLS slope of ln(cumulative structure) on ln(cumulative fixer
  sessions), one point per week that added either, through the end of that week, kept where both are
  > 0; 95% interval slope ± t(0.975; n-2) SE; fewer than 3 points (or one x) gives None. Above 1 means
  each intervention buys more structure than the last.
- ``ouroboros.findings``: distinct findings (miner, rule, subject, run) derived so far, one point per scope
  (``generic``, ``tenant``), zeros included.
- ``ouroboros.fixer_spend_usd``: per LA day of a session's ``started`` (the budget's day), Σ cost_usd of the
  fixer sessions that ended (``FixerSessionEnded``).
- ``ouroboros.cost_per_ready_pull_request_usd``: Σ cost_usd of every ended fixer session / the sessions whose
  outcome is ``ready``; None with the reason when none is ready.
- ``ouroboros.fixer_yield``: ready sessions / ended sessions; None when no session has ended.
- ``ouroboros.h_fleet``: Σ cache_read / Σ (input + cache_creation + cache_read) over every recorded run's
  result usage; None when that denominator is 0. Labels carry the floor 0.9867 and the offender count.
- ``ouroboros.h_r``: one point per offender, a run whose own ratio h_r is below the floor 0.9867, ranked
  ascending (label ``rank`` from 1); a run with no prompt tokens has no h_r.

Every interval is t-based on the slope's standard error with df = n - 2 (see ``workers.measurer.stats``).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from ouroboros_gates.schemas import Scope, SeriesPoint
from ouroboros_gates.workers.measurer.hfleet import FLOOR, RunRatio, offenders
from ouroboros_gates.workers.measurer.inputs import MeasureInput, RunCounts
from ouroboros_gates.workers.measurer.stats import Fit, ols

__all__ = [
    "SERIES",
    "ZONE",
    "compounding",
    "findings",
    "fixer_economics",
    "fixer_spend",
    "h_fleet",
    "h_r_points",
    "measure",
    "period_of",
    "period_start",
    "structure_exponent",
    "structure_per_intervention",
    "struggle_rate",
]

ZONE = ZoneInfo("America/Los_Angeles")
_P = "ouroboros."
SERIES = tuple(
    _P + name
    for name in (
        "struggle_rate_per_1k_tool_calls",
        "struggle_rate_per_1k_tool_calls_weekly",
        "compounding_per_week",
        "compounding_per_day",
        "structure_per_intervention",
        "structure_exponent",
        "findings",
        "fixer_spend_usd",
        "cost_per_ready_pull_request_usd",
        "fixer_yield",
        "h_fleet",
        "h_r",
    )
)
"""Every series name, in the order ``measure`` emits them."""

_INTERVAL = "95% t interval on the slope, df = n - 2"


def period_of(moment: datetime, kind: str, zone: ZoneInfo = ZONE) -> date:
    """The local date that names ``moment``'s day, or the Monday of its week (``kind`` day or week)."""
    local = moment.astimezone(zone).date()
    return local if kind == "day" else local - timedelta(days=local.weekday())


def period_start(day: date, zone: ZoneInfo = ZONE) -> datetime:
    """Local midnight of ``day`` as a UTC instant."""
    return datetime.combine(day, time(), tzinfo=zone).astimezone(UTC)


def _step(first: date, day: date, kind: str) -> int:
    return (day - first).days // (1 if kind == "day" else 7)


def _point(
    series: str,
    at: datetime,
    value: float | None,
    labels: Mapping[str, object],
    reason: str = "",
    interval: tuple[float, float] | None = None,
) -> SeriesPoint:
    low, high = interval or (None, None)
    return SeriesPoint(
        series=_P + series,
        at=at,
        value=value,
        reason=None if value is not None else reason,
        low=low,
        high=high,
        labels={key: str(item) for key, item in labels.items()},
    )


@dataclass(frozen=True)
class _Rate:
    period: date
    runs: int
    calls: int
    struggles: int

    @property
    def value(self) -> float | None:
        return 1000.0 * self.struggles / self.calls if self.calls else None

    @classmethod
    def of(cls, period: date, group: Sequence[RunCounts]) -> _Rate:
        """The rate of the runs started in ``period``."""
        return cls(period, len(group), sum(r.tool_calls for r in group), sum(r.tool_errors for r in group))


def _rates(runs: Iterable[RunCounts], kind: str, zone: ZoneInfo) -> list[_Rate]:
    return [_Rate.of(day, group) for day, group in sorted(_by_period(runs, kind, zone).items())]


def _by_period(runs: Iterable[RunCounts], kind: str, zone: ZoneInfo) -> dict[date, list[RunCounts]]:
    """The runs with a start, grouped by the day or week they started in."""
    groups: dict[date, list[RunCounts]] = defaultdict(list)
    for run in runs:
        if run.started_at is not None:
            groups[period_of(run.started_at, kind, zone)].append(run)
    return groups


def struggle_rate(inp: MeasureInput, kind: str, zone: ZoneInfo = ZONE) -> list[SeriesPoint]:
    """Struggles per 1,000 tool calls, one point per LA day (``kind`` day) or week (week) that had a run."""
    name = "struggle_rate_per_1k_tool_calls" + ("" if kind == "day" else "_weekly")
    points = []
    for rate in _rates(inp.runs, kind, zone):
        why = f"no tool calls in the {kind} of {rate.period} ({rate.runs} run(s))"
        points.append(
            _point(name, period_start(rate.period, zone), rate.value, {kind: rate.period.isoformat()}, why)
        )
    return points


def _fit(xs: Sequence[float], ys: Sequence[float], excluded: str = "") -> Fit | str:
    fit = ols(xs, ys)
    if isinstance(fit, str):
        return f"too few points: {fit}" + (f" ({excluded})" if excluded else "")
    return fit


def compounding(inp: MeasureInput, kind: str, zone: ZoneInfo = ZONE) -> SeriesPoint:
    """exp(OLS slope of ln rate on the period index) - 1, with its 95% interval."""
    rates = _rates(inp.runs, kind, zone)
    usable = [(r.period, r.value) for r in rates if r.value]
    zero, none = _unusable(rates)
    fit = _log_rate_fit(usable, kind, _excluded(zero, none))
    labels = _compounding_labels(inp, kind, len(usable), zero, none)
    name = f"compounding_per_{kind}"
    if isinstance(fit, str):
        return _point(name, inp.at, None, labels, fit)
    low, high = fit.interval()
    labels["df"] = fit.df
    return _point(name, inp.at, math.expm1(fit.slope), labels, interval=(math.expm1(low), math.expm1(high)))


def _unusable(rates: Sequence[_Rate]) -> tuple[int, int]:
    """How many periods the fit leaves out: those with a zero rate, and those with no tool call."""
    return sum(1 for r in rates if r.value == 0.0), sum(1 for r in rates if r.value is None)


def _log_rate_fit(usable: Sequence[tuple[date, float]], kind: str, excluded: str) -> Fit | str:
    """The OLS fit of ln rate on the period's index from the first usable period."""
    xs = [float(_step(usable[0][0], period, kind)) for period, _ in usable]
    return _fit(xs, [math.log(value) for _, value in usable], excluded)


def _compounding_labels(inp: MeasureInput, kind: str, points: int, zero: int, none: int) -> dict[str, object]:
    return {
        "unit": kind,
        "points": points,
        "excluded_zero_rate": zero,
        "excluded_no_tool_calls": none,
        "runs_without_start": sum(1 for r in inp.runs if r.started_at is None),
        "method": f"exp(OLS slope of ln rate on {kind} index) - 1; {_INTERVAL}",
    }


def _excluded(zero: int, none: int) -> str:
    """What the fit left out, for a note: the periods with a zero rate and those with no tool call."""
    return ", ".join(f"{n} {why} excluded" for n, why in ((zero, "zero-rate"), (none, "no-tool-call")) if n)


def _structure_weeks(inp: MeasureInput, zone: ZoneInfo) -> dict[date, dict[str, int]]:
    weeks: dict[date, dict[str, int]] = defaultdict(lambda: {"miner": 0, "ticket": 0, "sessions": 0})
    for piece in inp.structure:
        weeks[period_of(piece.at, "week", zone)][piece.kind] += 1
    for session in inp.sessions:
        weeks[period_of(session.ended, "week", zone)]["sessions"] += 1
    return dict(sorted(weeks.items()))


def structure_per_intervention(inp: MeasureInput, zone: ZoneInfo = ZONE) -> list[SeriesPoint]:
    """Per LA week, (accepted miners + closed tickets) / fixer sessions ended."""
    points = []
    for week, n in _structure_weeks(inp, zone).items():
        structure = n["miner"] + n["ticket"]
        value = structure / n["sessions"] if n["sessions"] else None
        why = (
            f"no fixer session ended in the week of {week} ({n['miner']} miner(s) accepted, "
            f"{n['ticket']} closed)"
        )
        labels = {"week": week.isoformat()}
        points.append(_point("structure_per_intervention", period_start(week, zone), value, labels, why))
    return points


def structure_exponent(inp: MeasureInput, zone: ZoneInfo = ZONE) -> SeriesPoint:
    """OLS slope of ln(cumulative structure) on ln(cumulative interventions), one point per active week."""
    xs, ys = _cumulative_logs(_structure_weeks(inp, zone).values())
    fit = _fit(xs, ys)
    labels: dict[str, object] = {
        "points": len(xs),
        "method": f"OLS slope of ln(cumulative structure) on ln(cumulative interventions); {_INTERVAL}",
    }
    if isinstance(fit, str):
        return _point("structure_exponent", inp.at, None, labels, fit)
    labels["df"] = fit.df
    return _point("structure_exponent", inp.at, fit.slope, labels, interval=fit.interval())


def _cumulative_logs(weeks: Iterable[dict[str, int]]) -> tuple[list[float], list[float]]:
    """ln(cumulative interventions) and ln(cumulative structure) at each week where both are under way."""
    xs: list[float] = []
    ys: list[float] = []
    structure = sessions = 0
    for n in weeks:
        structure, sessions = structure + n["miner"] + n["ticket"], sessions + n["sessions"]
        if structure and sessions:
            xs.append(math.log(sessions))
            ys.append(math.log(structure))
    return xs, ys


def findings(inp: MeasureInput) -> list[SeriesPoint]:
    """Distinct findings derived so far, one point per scope."""
    counts = {scope: 0 for scope in Scope}
    for _, scope in inp.findings:
        counts[scope] += 1
    return [_point("findings", inp.at, float(n), {"scope": scope.value}) for scope, n in counts.items()]


def fixer_spend(inp: MeasureInput, zone: ZoneInfo = ZONE) -> list[SeriesPoint]:
    """Per LA day of a session's start, the summed cost of the fixer sessions that ended."""
    days: dict[date, list[float]] = defaultdict(list)
    for session in inp.sessions:
        days[period_of(session.started, "day", zone)].append(session.cost_usd)
    return [
        _point(
            "fixer_spend_usd", period_start(day, zone), round(math.fsum(costs), 10), {"day": day.isoformat()}
        )
        for day, costs in sorted(days.items())
    ]


def fixer_economics(inp: MeasureInput) -> list[SeriesPoint]:
    """Cost per ready pull request and the fixers' yield, over every ended session."""
    n = len(inp.sessions)
    ready = sum(1 for s in inp.sessions if s.ready)
    spend = round(math.fsum(s.cost_usd for s in inp.sessions), 10)
    labels = {"sessions": n, "ready": ready, "spend_usd": spend}
    why = f"no ready pull request among {n} fixer session(s) (${spend:.2f} spent)"
    return [
        _point("cost_per_ready_pull_request_usd", inp.at, spend / ready if ready else None, labels, why),
        _point("fixer_yield", inp.at, ready / n if n else None, labels, "no fixer session has ended"),
    ]


def _ratios(inp: MeasureInput) -> list[RunRatio]:
    return [RunRatio(r.run, r.cache_read, r.prompt_tokens) for r in inp.runs]


def h_fleet(inp: MeasureInput) -> SeriesPoint:
    """Σ cache_read / Σ prompt tokens over every recorded run."""
    read = sum(r.cache_read for r in inp.runs)
    prompt = sum(r.prompt_tokens for r in inp.runs)
    labels = _h_fleet_labels(inp)
    why = f"no prompt tokens in {len(inp.runs)} run(s)"
    return _point("h_fleet", inp.at, read / prompt if prompt else None, labels, why)


def _h_fleet_labels(inp: MeasureInput) -> dict[str, object]:
    """The runs, those that read prompt tokens, those below the floor, and the floor."""
    return {
        "runs": len(inp.runs),
        "runs_with_usage": sum(1 for r in inp.runs if r.prompt_tokens),
        "offenders": len(offenders(_ratios(inp))),
        "floor": FLOOR,
    }


def h_r_points(inp: MeasureInput) -> list[SeriesPoint]:
    """One point per run below the floor, lowest h_r first."""
    return [
        _point("h_r", inp.at, ratio.h, {"run": ratio.run, "rank": rank, "floor": FLOOR})
        for rank, ratio in enumerate(offenders(_ratios(inp)), start=1)
    ]


def measure(inp: MeasureInput, zone: ZoneInfo = ZONE) -> list[SeriesPoint]:
    """Every series, in the order of ``SERIES``."""
    return [
        *struggle_rate(inp, "day", zone),
        *struggle_rate(inp, "week", zone),
        compounding(inp, "week", zone),
        compounding(inp, "day", zone),
        *structure_per_intervention(inp, zone),
        structure_exponent(inp, zone),
        *findings(inp),
        *fixer_spend(inp, zone),
        *fixer_economics(inp),
        h_fleet(inp),
        *h_r_points(inp),
    ]
