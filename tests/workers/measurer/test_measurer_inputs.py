"""``fold``: decoded events, in log order, into the measurer's input as of an instant."""

from __future__ import annotations

from datetime import timedelta

from _measurer_events import (
    finding_derived,
    miner_accepted,
    run_recorded,
    session_ended,
    t,
    ticket_closed,
)

from ouroboros_gates.schemas import ProbeCompleted, Scope
from ouroboros_gates.workers.measurer import EVENT_TYPES, RunCounts, Structure, fold

AT = t("2026-10-10T00:00:00Z")
EARLY = t("2026-10-06T12:00:00Z")


def test_fold_keeps_the_last_summary_of_a_run_and_sums_prompt_tokens() -> None:
    entries = [
        (EARLY, run_recorded("r1", "2026-10-05T16:00:00Z", 10, 1, read=5, fresh=1, created=2)),
        (
            EARLY + timedelta(hours=1),
            run_recorded("r1", "2026-10-05T16:00:00Z", 20, 2, read=50, fresh=3, created=4),
        ),
        (EARLY, run_recorded("r0", None, 1, 0)),
    ]
    inp = fold(entries, AT)
    assert inp.runs == (
        RunCounts("r0", None, 1, 0, 0, 0),
        RunCounts("r1", t("2026-10-05T16:00:00Z"), 20, 2, cache_read=50, prompt_tokens=57),
    )


def test_fold_ignores_what_was_recorded_after_the_instant() -> None:
    entries = [
        (EARLY, run_recorded("r1", "2026-10-05T16:00:00Z", 10, 1)),
        (AT + timedelta(seconds=1), run_recorded("r2", "2026-10-05T16:00:00Z", 10, 1)),
        (AT, ticket_closed(5)),
    ]
    inp = fold(entries, AT)
    assert [r.run for r in inp.runs] == ["r1"]
    assert inp.structure == (Structure("ticket", "5", AT),)


def test_fold_counts_structure_once_at_its_first_event_and_keeps_the_latest_scope() -> None:
    later = EARLY + timedelta(days=2)
    entries = [
        (EARLY, miner_accepted("m", Scope.TENANT)),
        (later, miner_accepted("m", Scope.GENERIC)),
        (EARLY, ticket_closed(3)),
        (later, ticket_closed(3)),
        (EARLY, ProbeCompleted(probe="p", hostname="h", held_s=0.0)),  # not read
    ]
    inp = fold(entries, AT)
    assert inp.structure == (Structure("miner", "m", EARLY), Structure("ticket", "3", EARLY))
    assert inp.accepted == (("m", Scope.GENERIC),)


def test_fold_sessions_by_ticket_and_start() -> None:
    entries = [
        (EARLY, session_ended(1, "2026-10-05T16:00:00Z", "2026-10-05T17:00:00Z", 1.0, "draft")),
        (EARLY, session_ended(1, "2026-10-05T16:00:00Z", "2026-10-05T18:00:00Z", 1.5, "ready")),  # re-read
        (EARLY, session_ended(1, "2026-10-06T16:00:00Z", "2026-10-06T17:00:00Z", 2.0, "no_pull_request")),
    ]
    inp = fold(entries, AT)
    assert [(s.ticket, s.cost_usd, s.ready) for s in inp.sessions] == [(1, 1.5, True), (1, 2.0, False)]


def test_fold_counts_distinct_findings() -> None:
    entries = [
        (EARLY, finding_derived("m", "r1", Scope.GENERIC)),
        (EARLY, finding_derived("m", "r1", Scope.GENERIC)),  # the same finding derived again
        (EARLY, finding_derived("m", "r2", Scope.GENERIC)),
        (EARLY, finding_derived("m", "r1", Scope.TENANT, subject="other")),
    ]
    inp = fold(entries, AT)
    assert sorted(scope.value for _, scope in inp.findings) == ["generic", "generic", "tenant"]


def test_event_types_read() -> None:
    assert {
        "RunRecorded",
        "FixerSessionEnded",
        "MinerAccepted",
        "TicketClosed",
        "FindingDerived",
    } == EVENT_TYPES
