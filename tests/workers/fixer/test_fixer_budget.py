"""The daily cap: atomic reservations (50 concurrent launches on PostgreSQL), one session per ticket,
the day in America/Los_Angeles, and cost folding over any interleaving of restarts."""

from __future__ import annotations

import json
import random
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ouroboros_gates.events import SideTables, ensure_schema, make_engine
from ouroboros_gates.events.budget import Budget, budget_day
from ouroboros_gates.workers.fixer import LiveCost, folded_cost

NOON = datetime(2026, 10, 5, 19, 0, tzinfo=UTC)  # 12:00 in Los Angeles


def _budget(url: str, cap: float) -> Budget:
    engine = make_engine(url)
    ensure_schema(engine)
    return Budget(SideTables(engine), cap, "America/Los_Angeles")


@pytest.mark.parametrize("backend", ["postgresql", "sqlite"])
def test_fifty_concurrent_launches_never_exceed_the_cap(backend: str, request: pytest.FixtureRequest) -> None:
    budget = _budget(request.getfixturevalue("pg_url" if backend == "postgresql" else "sqlite_url"), cap=20.0)
    with ThreadPoolExecutor(max_workers=50) as pool:
        granted = list(pool.map(lambda ticket: budget.reserve(ticket, 1.5, NOON), range(1, 51)))
    winners = [r for r in granted if r.granted]
    assert len(winners) == 13  # floor(20 / 1.5): every reservation that fits, and not one more
    reserved, spent = budget.day_totals("2026-10-05")
    assert (reserved, spent) == pytest.approx((19.5, 0.0))
    assert all("would pass the cap of $20.00" in r.reason for r in granted if not r.granted)
    # Settling what was spent frees the rest of each reservation for later launches.
    for reservation in winners:
        budget.settle(reservation.ticket, 0.5)
    assert budget.day_totals("2026-10-05") == pytest.approx((0.0, 6.5))
    assert budget.reserve(99, 13.5, NOON).granted and not budget.reserve(100, 0.01, NOON).granted
    budget.side.close()


def test_one_session_per_ticket_even_when_launched_concurrently(pg_url: str) -> None:
    budget = _budget(pg_url, cap=100.0)
    with ThreadPoolExecutor(max_workers=10) as pool:
        granted = list(pool.map(lambda _: budget.reserve(7, 1.0, NOON), range(10)))
    assert sum(r.granted for r in granted) == 1
    assert {r.reason for r in granted if not r.granted} == {"ticket #7 already had its fixer session"}
    assert budget.day_totals("2026-10-05") == pytest.approx((1.0, 0.0))
    budget.settle(7, 0.25)
    budget.settle(7, 0.75)  # a second settle changes nothing
    assert budget.day_totals("2026-10-05") == pytest.approx((0.0, 0.25))
    budget.side.close()


def test_a_zero_cap_keeps_fixers_off(sqlite_url: str) -> None:
    refused = _budget(sqlite_url, cap=0.0).reserve(1, 1.0, NOON)
    assert not refused.granted and "fixers are off" in refused.reason


def test_the_budget_day_is_the_date_in_los_angeles(sqlite_url: str) -> None:
    assert (
        budget_day(datetime(2026, 10, 5, 6, 59, tzinfo=UTC), "America/Los_Angeles").isoformat()
        == "2026-10-04"
    )
    assert (
        budget_day(datetime(2026, 10, 5, 7, 0, tzinfo=UTC), "America/Los_Angeles").isoformat() == "2026-10-05"
    )
    budget = _budget(sqlite_url, cap=2.0)
    assert budget.reserve(1, 2.0, datetime(2026, 10, 5, 6, 59, tzinfo=UTC)).day == "2026-10-04"
    assert budget.reserve(2, 2.0, datetime(2026, 10, 5, 7, 0, tzinfo=UTC)).granted  # a new day, a new cap
    assert not budget.reserve(3, 2.0, datetime(2026, 10, 6, 6, 0, tzinfo=UTC)).granted


@st.composite
def _session(draw: st.DrawFn) -> list[list[float]]:
    """One session's processes: each cumulative and rising; each reopened one starts from zero again,
    so its first reading is below where the previous process stopped (the drop that marks a restart)."""
    processes: list[list[int]] = []
    for _ in range(draw(st.integers(1, 4))):
        ceiling = processes[-1][-1] - 1 if processes else 500
        if ceiling < 1:
            break
        first = draw(st.integers(1, ceiling))
        steps = draw(st.lists(st.integers(0, 500), max_size=5))
        processes.append([first + sum(steps[:i]) for i in range(len(steps) + 1)])
    return [[cents / 100 for cents in process] for process in processes]


@settings(max_examples=200, deadline=None)
@given(sessions=st.lists(_session(), min_size=1, max_size=3), seed=st.integers(0, 2**32 - 1))
def test_cost_folding_over_any_interleaving_of_restarts(sessions: list[list[list[float]]], seed: int) -> None:
    streams = [[(f"s{i}", v) for process in session for v in process] for i, session in enumerate(sessions)]
    rng, lines = random.Random(seed), []
    while any(streams):  # a random interleaving that keeps each session's own order
        stream = rng.choice([s for s in streams if s])
        session, value = stream.pop(0)
        lines.append(json.dumps({"type": "result", "session_id": session, "total_cost_usd": value}))
        if rng.random() < 0.2:
            lines.append(json.dumps({"type": "assistant", "session_id": session}))
    expected = sum(process[-1] for session in sessions for process in session)
    assert folded_cost(lines) == pytest.approx(expected)
    live = LiveCost()
    for line in [*lines, "not json", "[1]", '{"total_cost_usd": true}']:
        live.feed(line)
    assert live.total == pytest.approx(expected)


def test_an_overrun_is_recorded_apart_and_never_charged_to_the_cap(sqlite_url: str) -> None:
    budget = _budget(sqlite_url, cap=2.0)
    assert budget.reserve(1, 1.5, NOON).granted
    settled = budget.settle(1, 5.0)  # its only cost line was its last: $5.00 on a $1.50 reservation
    assert (settled.charged_usd, settled.overrun_usd) == (1.5, 3.5)
    assert (
        budget.day_totals("2026-10-05") == pytest.approx((0.0, 1.5))
        and budget.day_overrun("2026-10-05") == 3.5
    )
    assert budget.settle(1, 9.0) == settled  # settled once
    refused = budget.reserve(2, 0.25, NOON)  # $1.50 charged + $0.25 fits the cap, but $5.00 was really spent
    assert not refused.granted and "would pass the cap of $2.00" in refused.reason


def test_spend_that_was_not_reported_is_settled_at_least_at_the_reservation(sqlite_url: str) -> None:
    budget = _budget(sqlite_url, cap=10.0)
    for ticket in (1, 2, 3):
        assert budget.reserve(ticket, 1.5, NOON).granted
    # Killed after reporting $0.25: what it spent since is unknown, so the whole reservation is charged.
    cut = budget.settle(1, 0.25, reported=False)
    assert (cut.charged_usd, cut.overrun_usd, cut.spent_usd, cut.estimated) == (1.5, 0.0, 1.5, True)
    # Killed after a reading past its reservation: that reading stands, the overrun recorded apart.
    past = budget.settle(2, 4.0, reported=False)
    assert (past.charged_usd, past.overrun_usd, past.estimated) == (1.5, 2.5, True)
    # Reported in full: what it said, nothing estimated.
    told = budget.settle(3, 0.25)
    assert (told.charged_usd, told.overrun_usd, told.estimated) == (0.25, 0.0, False)
    assert budget.day_totals("2026-10-05") == pytest.approx((0.0, 3.25))
    assert budget.day_overrun("2026-10-05") == pytest.approx(2.5)
    assert budget.settle(1, 0.0, reported=False).charged_usd == 1.5  # settled once
    budget.side.close()


_SESSIONS = st.lists(
    st.tuples(st.integers(1, 300), st.integers(0, 900), st.booleans()), min_size=1, max_size=12
)


@settings(max_examples=60, deadline=None)
@given(sessions=_SESSIONS)
def test_the_cap_is_never_charged_more_than_it_allows_whatever_sessions_spend(
    sessions: list[tuple[int, int, bool]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    budget = _budget(f"sqlite:///{tmp_path_factory.mktemp('budget') / 'events.sqlite'}", cap=5.0)
    spent_total = 0.0
    for ticket, (reserve_cents, spent_cents, reported) in enumerate(sessions, start=1):
        if not budget.reserve(ticket, reserve_cents / 100, NOON).granted:
            continue
        settled = budget.settle(ticket, spent_cents / 100, reported=reported)
        # Cut off, a session is taken to have spent at least its reservation; never less than it reported.
        taken = spent_cents if reported else max(spent_cents, reserve_cents)
        assert (
            settled.charged_usd <= reserve_cents / 100
            and settled.spent_usd == pytest.approx(taken / 100)
            and settled.estimated is not reported
        )
        spent_total += taken / 100
        reserved, charged = budget.day_totals("2026-10-05")
        assert reserved == pytest.approx(0.0) and charged <= 5.0 + 1e-9  # the charges never pass the cap
        assert charged + budget.day_overrun("2026-10-05") == pytest.approx(spent_total)  # nothing hidden
    budget.side.close()
