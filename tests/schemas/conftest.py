"""One valid instance of every contract type, built by a small factory table.

The table must name every record class the ``schemas`` package declares (the bases ``Event`` and
``Message`` excepted): ``test_registry`` fails when a type is added without an example here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta

import pytest

from ouroboros_gates import schemas as s

T0 = datetime(2026, 10, 2, 18, 4, 45, tzinfo=UTC)
SHA = "6c1f2a103b7e4d6a9e510a1b2c3d4e316c1f2a10"
DIGEST = "ab" * 32
RUN = "6c1f2a10-3b7e-4d6a-9e51-0a1b2c3d4e60"
MID = {"message_id": "msg-00000001"}

SPAN = s.Span(file="runs/4e60/events.jsonl", line=3)
FACT = s.Fact(predicate="score", args=(s.Text(text=RUN), s.Number(number=1259)), span=SPAN)
FINDING = s.Finding(
    miner="draft-pr-late",
    rule="invisible",
    subject=(s.Text(text=RUN),),
    severity=s.Severity.S3,
    proof=(
        s.Fact(predicate="gated", args=(s.Text(text=RUN),), span=SPAN),
        FACT,
        s.Fact(predicate="knee", args=(s.Number(number=468),)),
    ),
    scope=s.Scope.GENERIC,
)
USAGE = s.Usage(
    input_tokens=3, output_tokens=120, cache_creation_input_tokens=900, cache_read_input_tokens=50
)
SUMMARY = s.RunSummary(
    run=RUN,
    lines=12,
    malformed=1,
    tool_calls=4,
    tool_errors=1,
    usage=USAGE,
    cost_usd=0.42,
    started_at=T0,
    ended_at=T0 + timedelta(seconds=1259),
)
BACKTEST = s.Backtest(
    miner="draft-pr-late",
    split_at=T0,
    kappa_star=468.0,
    families=3,
    fit=("r1", "r2"),
    judged=("r3", "r4"),
    tp=("r3",),
    fp=(),
    fn=(),
    lead_s={"r3": 304.0},
    pbo=None,
    pbo_status="waits for labels",
)
MUTANTS = (
    s.MutantResult(
        operator=s.MutationOperator.KNEE_CONSTANT,
        description="gt(S, K) -> gt(S, 468)",
        outcome=s.MutantOutcome.KILLED,
        killed_by=("knee-binds",),
    ),
    s.MutantResult(
        operator=s.MutationOperator.DROP_LITERAL,
        description="drop gated(R)",
        outcome=s.MutantOutcome.SURVIVED,
    ),
    s.MutantResult(
        operator=s.MutationOperator.NEGATE_LITERAL,
        description="!score(R, S)",
        outcome=s.MutantOutcome.REFUSED,
        reason="negation before its variables are bound",
    ),
)
ACCEPTANCE = s.MinerAcceptance(
    miner="draft-pr-late",
    scope=s.Scope.GENERIC,
    backtest=BACKTEST.summary(),
    mutation_score=0.5,
    mutation_floor=0.5,
    test_passed=True,
)
PROPOSER_CALL = s.ProposerCall(
    family="haiku",
    model="claude-haiku-4-5",
    tickets=(249, 105),
    artifacts=2,
    input_tokens=5120,
    cache_read_tokens=0,
    cache_creation_tokens=4096,
    output_tokens=900,
    cost_usd=0.0142,
    wall_s=11.5,
    load=0.42,
    at=T0,
)
PROPOSAL = s.Proposal(
    ticket=249,
    comment_id=9001,
    miner="self-merge",
    corpus=(s.CorpusKind.PULL_REQUEST,),
    instances=("#226", "#245"),
    predicate="a PR merged by its own session",
    facts=("merged(P, S)",),
    rules="offense(P) :- merged(P, S), session(P, S).",
    labels=("#226\t+",),
    posted_at=T0,
)
LAUNCH = s.PrecheckVerdict(
    ticket=249,
    proposal=9001,
    miner="self-merge",
    verdict=s.PrecheckOutcome.LAUNCH,
    instances_named=("#226", "#245"),
    instances_found=("#226",),
    reason="1 of 2 instances exist",
)
REQUEST = s.LabelRequest(
    ticket=105,
    proposal=77,
    miner="mkdir-race",
    corpus=(s.CorpusKind.JSONL,),
    instances=("run-x",),
    reason="no named instance exists",
    at=T0,
)
LABEL = s.ProposedLabel(
    ticket=105,
    instance=RUN,
    positive=True,
    quote="mkdir: cannot create directory",
    reason="the error",
    span=SPAN,
    acceptance=s.Acceptance.ACCEPTED,
    why="every fragment on the named line",
)
MINE_RUN = s.MineRun(
    **MID, run=RUN, path=f"{RUN}/events.jsonl", digest=DIGEST, correlation_id="c-1", causation_id="e-7"
)
LABELER_RUN = s.LabelerRun(
    started=T0,
    ended=T0 + timedelta(minutes=3),
    tickets=(105, 71),
    batches=4,
    candidates=80,
    accepted=5,
    rejected=1,
    model="qwen3:8b",
    keep_alive_s=42.0,
    status=s.LabelerStatus.COMPLETED,
)
FIXER = s.FixerSession(
    ticket=249,
    branch="miner/self-merge-9f76",
    worktree="/srv/wt/249",
    started=T0,
    ended=T0 + timedelta(minutes=20),
    cost_usd=1.25,
    outcome=s.FixerOutcome.READY,
    pull_request=301,
)
REFUSED = s.MergeResult(
    pull_request=301, head_sha=SHA, outcome=s.MergeOutcome.REFUSED, refusal=("backtest FN 1",), at=T0
)
POINT = s.SeriesPoint(
    series="ouroboros.compounding_per_week", at=T0, value=0.93, low=0.88, high=0.99, labels={"zone": "LA"}
)
CANDIDATE = s.Candidate(
    repo="acme/shop", pin=SHA, path="app/views.py", function="checkout", family="injection"
)
INSTRUMENTS = {
    "qr": s.InstrumentState(state=s.State.RAN, version=DIGEST),
    "delta": s.InstrumentState(state=s.State.NOT_APPLICABLE),
}
X: dict[str, s.Scalar] = {
    "qr.enabled_hits": 2,
    "qr.max_precision_estimate": 0.8,
    "qr.any": True,
    "eng.rung_max": "suspicion",
    "delta.novelty": None,
}
DECISION = s.Decision(
    candidate=CANDIDATE,
    action=s.Action.BLOCK,
    p=0.97,
    rationale="tainted query",
    program_id=DIGEST,
    model="deepseek-flash",
    cost_usd=0.003,
    cached=False,
)


def _rejected() -> s.MessageRejected:
    return s.MessageRejected(
        task="miner.mine",
        message_id=None,
        errors=(s.FieldError(field="run", message="String should match pattern", input='"../etc"'),),
    )


EXAMPLES: dict[str, Callable[[], s.Record]] = {
    # common
    "Text": lambda: s.Text(text="6c1f2a10"),
    "Number": lambda: s.Number(number=1.5),
    "Span": lambda: SPAN,
    "Fact": lambda: FACT,
    # miners
    "Finding": lambda: FINDING,
    "BacktestSummary": BACKTEST.summary,
    "Backtest": lambda: BACKTEST,
    "MutantResult": lambda: MUTANTS[0],
    "MutationReport": lambda: s.MutationReport(
        miner="draft-pr-late", mutants=MUTANTS, killed=1, survived=1, score=0.5, floor=0.5
    ),
    "LabelRow": lambda: s.LabelRow(
        instance=RUN, positive=True, start=T0, flagged=T0 + timedelta(seconds=772), source="#102"
    ),
    "MinerAcceptance": lambda: ACCEPTANCE,
    # harness
    "Usage": lambda: USAGE,
    "HarnessEvent": lambda: s.HarnessEvent(
        run=RUN,
        session="sess-1",
        kind=s.HarnessKind.RESULT,
        subtype="success",
        usage=USAGE,
        total_cost_usd=0.42,
        timestamp=T0,
        span=SPAN,
        raw={"type": "result", "usage": {"input_tokens": 3}, "new_in_v9": [1, {"x": None}]},
    ),
    "RunSummary": lambda: SUMMARY,
    # loop
    "Proposal": lambda: PROPOSAL,
    "PrecheckVerdict": lambda: LAUNCH,
    "LabelRequest": lambda: REQUEST,
    "ProposedLabel": lambda: LABEL,
    "LabelerRun": lambda: LABELER_RUN,
    "FixerSession": lambda: FIXER,
    "MergeResult": lambda: REFUSED,
    "SeriesPoint": lambda: POINT,
    "ProposerCall": lambda: PROPOSER_CALL,
    # decider
    "Candidate": lambda: CANDIDATE,
    "InstrumentState": lambda: INSTRUMENTS["qr"],
    "FeatureRecord": lambda: s.FeatureRecord(
        candidate=CANDIDATE, language="python", x=X, instruments=INSTRUMENTS, feature_set_digest=DIGEST
    ),
    "Label": lambda: s.Label(
        candidate=CANDIDATE,
        y=1,
        source="pairs",
        source_ref="pair-17",
        group="acme/shop",
        tier=s.LabelTier.REVIEWED,
        provenance=s.Provenance.HUMAN,
    ),
    "Example": lambda: s.Example(
        excerpt_sha=DIGEST,
        x=X,
        instruments=INSTRUMENTS,
        y=0,
        group="acme/shop",
        language="python",
        family="injection",
    ),
    "Decision": lambda: DECISION,
    # events
    "RunRecorded": lambda: s.RunRecorded(run=RUN, path=f"{RUN}/events.jsonl", summary=SUMMARY, digest=DIGEST),
    "FindingDerived": lambda: s.FindingDerived(run=RUN, finding=FINDING),
    "MinerAccepted": lambda: s.MinerAccepted(acceptance=ACCEPTANCE),
    "MinerRefused": lambda: s.MinerRefused(
        miner="self-match", digest=DIGEST, reason="backtest FN = 1", judged_runs=(RUN,)
    ),
    "ProposalPosted": lambda: s.ProposalPosted(proposal=PROPOSAL),
    "PrecheckCompleted": lambda: s.PrecheckCompleted(verdict=LAUNCH),
    "ProposerCallCompleted": lambda: s.ProposerCallCompleted(call=PROPOSER_CALL),
    "LabelRequested": lambda: s.LabelRequested(request=REQUEST),
    "LabelProposed": lambda: s.LabelProposed(label=LABEL),
    "LabelerRunCompleted": lambda: s.LabelerRunCompleted(labeler_run=LABELER_RUN),
    "FixerSessionEnded": lambda: s.FixerSessionEnded(session=FIXER),
    "MergeAttempted": lambda: s.MergeAttempted(pull_request=301, head_sha=SHA, at=T0),
    "Merged": lambda: s.Merged(
        result=s.MergeResult(pull_request=301, head_sha=SHA, outcome=s.MergeOutcome.MERGED, at=T0)
    ),
    "MergeRefused": lambda: s.MergeRefused(result=REFUSED),
    "TicketClosed": lambda: s.TicketClosed(ticket=249, pull_request=301, reason="Backtest FN 0"),
    "PushReceived": lambda: s.PushReceived(repo="acme/shop", base="0" * 40, head=SHA, ref="refs/heads/main"),
    "DecisionMade": lambda: s.DecisionMade(decision=DECISION),
    "ExperimentRegistered": lambda: s.ExperimentRegistered(
        experiment="exp-001", manifest_sha256="a" * 64, units_sha256="b" * 64, code_commit=SHA
    ),
    "SeriesPointRecorded": lambda: s.SeriesPointRecorded(point=POINT),
    "FieldError": lambda: _rejected().errors[0],
    "MessageRejected": _rejected,
    "MessageDeadLettered": lambda: s.MessageDeadLettered(
        task="labeler.label", message_id="msg-00000002", attempts=5, error_type="LabelerError", error="boom"
    ),
    "ProbeCompleted": lambda: s.ProbeCompleted(probe="p-1", hostname="worker-3", held_s=1.5),
    # the operator's actions
    "DeadLetterRetried": lambda: s.DeadLetterRetried(
        task="labeler.label", message_id="msg-00000002", retry_message_id="msg-00000003", attempt=1, at=T0
    ),
    "DecisionDismissed": lambda: s.DecisionDismissed(
        candidate=CANDIDATE, fingerprint="f" * 32, at=T0, note="fp"
    ),
    "LabelReviewed": lambda: s.LabelReviewed(
        label=7, ticket=105, instance=RUN, review=s.Review.REJECTED, at=T0, note="not on that line"
    ),
    "BacktestReplayed": lambda: s.BacktestReplayed(
        miner="draft-pr-late", as_of=T0, labels=3, runs=3, backtest=BACKTEST, at=T0 + timedelta(seconds=1)
    ),
    # messages
    "IngestRun": lambda: s.IngestRun(**MID, path=f"{RUN}/events.jsonl", run=RUN),
    "MineRun": lambda: MINE_RUN,
    "AcceptMiner": lambda: s.AcceptMiner(
        message_id="msg-00000002", correlation_id="c-1", causation_id="e-7", mine=MINE_RUN
    ),
    "PrecheckTicket": lambda: s.PrecheckTicket(**MID, ticket=249),
    "PrecheckSweep": lambda: s.PrecheckSweep(**MID),
    "LabelTicket": lambda: s.LabelTicket(**MID, ticket=105, request=REQUEST),
    "LaunchFixer": lambda: s.LaunchFixer(**MID, ticket=249, verdict=LAUNCH),
    "DecidePush": lambda: s.DecidePush(**MID, repo="acme/shop", base="0" * 40, head=SHA, ref="refs/heads/x"),
    "RunMergeTrain": lambda: s.RunMergeTrain(**MID),
    "Measure": lambda: s.Measure(**MID, at=T0),
    "Probe": lambda: s.Probe(**MID, probe="p-1", hold_s=600),
}

BASES = {"Event", "Message"}


def contract_type_names() -> list[str]:
    """Every record class the ``schemas`` package declares, bases excepted (sorted)."""
    return [name for name in _ours(s.RECORD_TYPES) if name not in BASES]


def _ours(registry: Mapping[str, type[s.Record]]) -> list[str]:
    # Other packages' tests may register throw-away types; only the contract's own are checked here.
    return sorted(
        name for name, cls in registry.items() if cls.__module__.startswith("ouroboros_gates.schemas.")
    )


@pytest.fixture
def examples() -> dict[str, Callable[[], s.Record]]:
    """The factory table: class name -> a function building one valid instance."""
    return EXAMPLES


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``contract_type`` / ``event_type`` / ``message_type`` over the live registries."""
    if "contract_type" in metafunc.fixturenames:
        metafunc.parametrize("contract_type", contract_type_names())
    if "event_type" in metafunc.fixturenames:
        metafunc.parametrize("event_type", _ours(s.EVENT_TYPES))
    if "message_type" in metafunc.fixturenames:
        metafunc.parametrize("message_type", _ours(s.MESSAGE_TYPES))
