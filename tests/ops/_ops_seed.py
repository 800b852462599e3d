"""An event log seeded like a few weeks of the loop, for the API and ops page tests.

Six weeks of runs whose struggle rate falls, findings with proofs pointing at real lines of real run files
(one finding per tenant scope, plus another tenant's), an accepted miner, a fixer session today, a merge
train that refused one head and merged another, a labeler run, and the series measured by the measurer's
own code (``measure_log``), appended as ``SeriesPointRecorded`` with the snapshot written beside them.
Beside the loop: pre-check verdicts, a label request and its proposed labels, the decider's decisions on two
repositories (with flows and rationales), and dead letters (one whose message was kept, one from before).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from ouroboros_gates.events import Metadata, SqlEventStore, StreamWrite, ensure_schema
from ouroboros_gates.events.projections import PROJECTIONS
from ouroboros_gates.events.projector import catch_up
from ouroboros_gates.schemas import (
    Acceptance,
    Action,
    BacktestSummary,
    Candidate,
    CorpusKind,
    Decision,
    DecisionMade,
    Event,
    Fact,
    Finding,
    FindingDerived,
    FixerOutcome,
    FixerSession,
    FixerSessionEnded,
    IngestRun,
    LabelerRun,
    LabelerRunCompleted,
    LabelerStatus,
    LabelProposed,
    LabelRequest,
    LabelRequested,
    MergeAttempted,
    Merged,
    MergeOutcome,
    MergeRefused,
    MergeResult,
    MessageDeadLettered,
    MinerAcceptance,
    MinerAccepted,
    Number,
    PrecheckCompleted,
    PrecheckOutcome,
    PrecheckVerdict,
    ProposedLabel,
    RunRecorded,
    RunSummary,
    Scope,
    SeriesPointRecorded,
    Severity,
    Span,
    Text,
    Usage,
)
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers.measurer import measure_log, series_stream, snapshot_path, write_snapshot

LA = ZoneInfo("America/Los_Angeles")
DIGEST = "0" * 64
REFUSAL = "check row 'miner test' exited 1"
PIN = "6c1f2a103b7e4d6a9e510a1b2c3d4e316c1f2a10"
FLOW = "request.args (line 12) reaches os.system (command) at line 14"
DEAD_KEPT = "dead-ingest-0001"
DEAD_OLD = "dead-mine-0002"


@dataclass(frozen=True)
class Seeded:
    """The seeded state: its settings, store, the run file the proofs point at, and the measured instant."""

    settings: Settings
    store: SqlEventStore
    run_file: Path
    measured_at: datetime


def _commit(store: SqlEventStore, key: str, stream: str, *events: Event, tenant: str = "default") -> None:
    store.commit([StreamWrite(stream, events)], Metadata(producer="test.seed", message_id=key, tenant=tenant))


def _run(store: SqlEventStore, state: Path, run: str, started: datetime, calls: int, errors: int) -> Path:
    folder = state / "runs" / run
    folder.mkdir(parents=True, exist_ok=True)
    file = folder / "events.jsonl"
    lines = [
        {"event_type": "session_start", "event": {"run": run}},
        {
            "event_type": "tool_result",
            "event": {"is_error": True, "content": "mkdir: cannot create directory"},
        },
        {"event_type": "draft_pr", "event": {"seconds": 1259}},
    ]
    file.write_text("".join(json.dumps(line) + "\n" for line in lines))
    # Most runs read their prompts from the cache; two of the first week's did not (h_fleet's offenders).
    cold = run in ("run-w0d0", "run-w0d2")
    usage = Usage(
        input_tokens=40_000 if cold else 30, cache_creation_input_tokens=200, cache_read_input_tokens=60_000
    )
    summary = RunSummary(
        run=run,
        lines=3,
        malformed=0,
        tool_calls=calls,
        tool_errors=errors,
        usage=usage,
        started_at=started,
        cost_usd=0.5,
    )
    _commit(
        store,
        f"run-{run}",
        f"run/{run}",
        RunRecorded(run=run, path=str(file), summary=summary, digest=DIGEST),
    )
    return file


def _finding(run: str, file: Path, scope: Scope, rule: str = "invisible") -> Finding:
    proof = (
        Fact(predicate="gated", args=(Text(text=run),), span=Span(file=str(file), line=1)),
        Fact(
            predicate="score", args=(Text(text=run), Number(number=1259)), span=Span(file=str(file), line=3)
        ),
        Fact(predicate="knee", args=(Number(number=468),)),
    )
    return Finding(
        miner="draft-pr-late",
        rule=rule,
        subject=(Text(text=run),),
        severity=Severity.S3,
        proof=proof,
        scope=scope,
    )


def _acceptance(miner: str, scope: Scope) -> MinerAccepted:
    backtest = BacktestSummary(
        split_at=datetime(2026, 10, 2, 18, 4, 45, tzinfo=UTC),
        kappa_star=468.0,
        families=3,
        tp=1,
        fp=0,
        fn=0,
        pbo_status="waits for labels",
    )
    acceptance = MinerAcceptance(
        miner=miner, scope=scope, backtest=backtest, mutation_score=1.0, mutation_floor=0.8, test_passed=True
    )
    return MinerAccepted(acceptance=acceptance)


def _loop_events(store: SqlEventStore, now: datetime) -> None:
    # The fixers' budget day is Los Angeles's: the session starts within it whatever the hour the tests run
    # at.
    since_midnight = now - datetime.combine(now.astimezone(LA).date(), datetime.min.time(), LA)
    took = min(timedelta(minutes=30), since_midnight / 2)
    session = FixerSession(
        ticket=105,
        branch="miner/draft-pr-late-4e60",
        worktree="/tmp/wt105",
        started=now - took,
        ended=now - took / 6,
        cost_usd=1.25,
        outcome=FixerOutcome.READY,
        pull_request=1105,
    )
    _commit(store, "fixer-105", "ticket/105", FixerSessionEnded(session=session))
    at = now - timedelta(minutes=4)
    refused = MergeResult(
        pull_request=1105, head_sha="abc1234", outcome=MergeOutcome.REFUSED, refusal=(REFUSAL,), at=at
    )
    merged = MergeResult(pull_request=1106, head_sha="def5678", outcome=MergeOutcome.MERGED, at=at)
    _commit(
        store,
        "merge-1105",
        "pr/1105",
        MergeAttempted(pull_request=1105, head_sha="abc1234", at=at),
        MergeRefused(result=refused),
    )
    _commit(store, "merge-1106", "pr/1106", Merged(result=merged))
    run = LabelerRun(
        started=now - timedelta(hours=2),
        ended=now - timedelta(hours=1),
        tickets=(105, 71),
        batches=4,
        candidates=120,
        accepted=3,
        rejected=1,
        model="qwen3:8b",
        keep_alive_s=42.0,
        status=LabelerStatus.COMPLETED,
    )
    _commit(store, "labeler-1", "labeler/1", LabelerRunCompleted(labeler_run=run))


def _candidate(repo: str, function: str, family: str = "injection") -> Candidate:
    return Candidate(repo=repo, pin=PIN, path="app/views.py", function=function, family=family)


def _decisions(store: SqlEventStore) -> None:
    made = [
        (
            _candidate("acme/shop", "checkout"),
            Action.BLOCK,
            0.97,
            "user input reaches a shell unsanitised",
            (FLOW,),
        ),
        (
            _candidate("acme/shop", "search"),
            Action.ADVISORY,
            0.62,
            "a query built from input; a guard may hold",
            (),
        ),
        (_candidate("acme/shop", "health"), Action.DROP, 0.04, "a constant command; nothing reaches it", ()),
        (
            _candidate("acme/web", "upload", "path"),
            Action.ADVISORY,
            0.55,
            "a path joined from a form field",
            (),
        ),
    ]
    events = [
        DecisionMade(
            decision=Decision(
                candidate=c, action=a, p=p, rationale=why, program_id=DIGEST, variant="memory-vote"
            ),
            flows=flows,
        )
        for c, a, p, why, flows in made
    ]
    _commit(store, "decisions-1", f"push/{PIN}", *events)


def _queue(store: SqlEventStore, run_file: Path, now: datetime) -> None:
    launch = PrecheckVerdict(
        ticket=105,
        proposal=4001,
        miner="draft-pr-late",
        verdict=PrecheckOutcome.LAUNCH,
        instances_named=("run-w5d4",),
        instances_found=("run-w5d4",),
        reason="1 of 1 found",
    )
    waits = PrecheckVerdict(
        ticket=71,
        proposal=4002,
        miner="draft-pr-late",
        verdict=PrecheckOutcome.NEEDS_LABELS,
        instances_named=("4e60",),
        reason="no instance named is a recorded run",
    )
    _commit(store, "precheck-105", "ticket/105", PrecheckCompleted(verdict=launch))
    _commit(store, "precheck-71", "ticket/71", PrecheckCompleted(verdict=waits))
    request = LabelRequest(
        ticket=71,
        proposal=4002,
        miner="draft-pr-late",
        corpus=(CorpusKind.JSONL,),
        instances=("4e60",),
        reason=waits.reason,
        at=now,
    )
    _commit(store, "request-71", "ticket/71", LabelRequested(request=request))
    span = Span(file=str(run_file), line=3)
    kept = ProposedLabel(
        ticket=71,
        instance="run-w5d4",
        positive=True,
        quote='"draft_pr"',
        span=span,
        acceptance=Acceptance.ACCEPTED,
        why="the quote is on its line",
    )
    refused = ProposedLabel(
        ticket=71,
        instance="run-w5d2",
        positive=True,
        quote="gh pr create",
        span=span,
        acceptance=Acceptance.REJECTED,
        why="the quote is not on line 3",
    )
    _commit(store, "labels-71", "ticket/71", LabelProposed(label=kept), LabelProposed(label=refused))


def _dead_letters(store: SqlEventStore, run_file: Path) -> None:
    message = IngestRun(message_id=DEAD_KEPT, path=str(run_file), run="run-w5d4")
    kept = MessageDeadLettered(
        task="miner.ingest",
        message_id=DEAD_KEPT,
        attempts=6,
        error_type="TransientError",
        error="database is locked",
        message=message.to_json_dict(),
    )
    old = MessageDeadLettered(
        task="miner.mine",
        message_id=DEAD_OLD,
        attempts=6,
        error_type="PermanentError",
        error="run not recorded",
    )
    for event in (kept, old):
        store.commit(
            [StreamWrite("fleet/dead-letter", [event])], Metadata("fleet.dead_letter", event.message_id)
        )


def seed(tmp: Path, tenant: str = "default", **settings_kwargs: object) -> Seeded:
    """Seed ``tmp/state`` and return its settings (tenant ``tenant``) and store, projections caught up."""
    settings = Settings(state=tmp / "state", tenant=tenant, broker_url="memory://", **settings_kwargs)  # type: ignore[arg-type]
    store = SqlEventStore.from_url(settings.event_log_url)
    ensure_schema(store.engine)
    now = datetime.now(UTC)
    monday = datetime.combine((now.astimezone(LA) - timedelta(weeks=6)).date(), datetime.min.time(), LA)
    monday -= timedelta(days=monday.weekday())
    file = Path()
    for week in range(6):
        for day in (0, 2, 4):
            started = monday + timedelta(weeks=week, days=day, hours=10)
            errors = max(40 - 6 * week - day, 2)  # struggles fall week over week
            file = _run(store, settings.state_dir, f"run-w{week}d{day}", started, 1000, errors)
    _commit(
        store,
        "finding-own",
        "run/run-w5d4",
        FindingDerived(run="run-w5d4", finding=_finding("run-w5d4", file, Scope.TENANT)),
    )
    _commit(
        store,
        "finding-generic",
        "run/run-w5d2",
        FindingDerived(run="run-w5d2", finding=_finding("run-w5d2", file, Scope.GENERIC)),
    )
    other = "other-tenant-run"
    _commit(
        store,
        "finding-other-tenant",
        f"run/{other}",
        FindingDerived(run=other, finding=_finding(other, file, Scope.TENANT, rule="secret")),
        tenant="acme",
    )
    _commit(
        store,
        "finding-other-generic",
        f"run/{other}",
        FindingDerived(run=other, finding=_finding(other, file, Scope.GENERIC, rule="shared")),
        tenant="acme",
    )
    _commit(store, "accepted-template", "miner/draft-pr-late", _acceptance("draft-pr-late", Scope.GENERIC))
    _commit(store, "accepted-acme", "miner/acme-only", _acceptance("acme-only", Scope.TENANT), tenant="acme")
    _loop_events(store, now)
    _decisions(store)
    _queue(store, file, now)
    _dead_letters(store, file)
    at = datetime.now(UTC)
    points, snapshot = measure_log(store, at, LA)
    _commit(
        store, f"measure-{at.isoformat()}", series_stream(at), *(SeriesPointRecorded(point=p) for p in points)
    )
    write_snapshot(snapshot_path(settings), snapshot)
    catch_up(store, PROJECTIONS)
    return Seeded(settings, store, file, at)
