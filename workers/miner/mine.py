"""Mine one run with every accepted miner, and decide which miners are accepted.

A miner is accepted (and becomes a gate) only when its own test passes: check_rules, FN = 0 on the
walk-forward backtest, the mutation gate. Acceptance is decided once per version of the miner's files
(a digest of its folder); the fitted κ* is the knee it mines with. In the fleet the mutation test judges
equivalence on the runs the event log holds when that version is first judged, beside the fixtures
(``miner_test(…, runs=…)``): a mutant that changes a verdict on a recorded run is not equivalent. The runs
recorded then differ from one moment to the next, so two workers could judge one version differently: the
fleet records the first verdict on a version (``MinerAccepted`` or ``MinerRefused``, naming the runs it was
judged on) and every worker follows the recorded one (``fleet_gates``).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ouroboros_gates.events import Metadata, SqlEventStore, StreamWrite
from ouroboros_gates.events.recorded import recorded_runs
from ouroboros_gates.miners import CorpusItem, Miner, MinerError, Rules, discover, extract_facts, find, miner_test
from ouroboros_gates.miners.corpus import JSONL
from ouroboros_gates.miners.datalog import Value
from ouroboros_gates.schemas import Finding, MinerAcceptance, MinerAccepted, MinerRefused
from ouroboros_gates.schemas.errors import CorpusError

__all__ = ["Gate", "Verdict", "accepted_gates", "finding_key", "fleet_gates", "mine_run", "miner_digest"]


@dataclass(frozen=True)
class Gate:
    """An accepted miner with its fitted knee, ready to mine."""

    miner: Miner
    knee: Value | None
    digest: str
    accepted: MinerAccepted
    rules: Rules


def miner_digest(miner: Miner) -> str:
    """sha256 over the miner's extract.py, rules.dl and fixtures: acceptance holds for exactly these."""
    files = sorted(p for p in miner.folder.rglob("*") if p.suffix in _DIGESTED and "__pycache__" not in p.parts)
    stats = tuple((path, path.stat()) for path in files if path.is_file())
    # Every run a worker mines asks; the files are read again only when one of them changed.
    return _digest(miner.folder, tuple((str(path), st.st_mtime_ns, st.st_size) for path, st in stats))


_DIGESTED = frozenset({".py", ".dl", ".tsv", ".jsonl"})


@lru_cache(maxsize=256)
def _digest(folder: Path, signature: tuple[tuple[str, int, int], ...]) -> str:
    sha = hashlib.sha256()
    for name, _mtime, _size in signature:
        path = Path(name)
        sha.update(str(path.relative_to(folder)).encode())
        sha.update(path.read_bytes())
    return sha.hexdigest()


RecordedPaths = Callable[[], Sequence[Path]]
"""The paths of the runs the event log holds, asked for only when a miner version is judged."""


@dataclass(frozen=True)
class Verdict:
    """One version of a miner as its test judged it: a gate, or the reason it is not one."""

    miner: Miner
    digest: str
    gate: Gate | None
    reason: str
    runs: tuple[Path, ...]
    """The recorded runs its mutants were judged on (beside its fixtures)."""


_judged: dict[tuple[Path, str], Verdict | None] = {}


def _judge(folder: Path, digest: str, runs: RecordedPaths | None = None) -> Verdict | None:
    """The miner test's verdict for one version of a miner (kept: it does not change under it)."""
    key = (folder, digest)
    if key not in _judged:
        _judged[key] = _test(folder, digest, list(runs()) if runs is not None else [])
    return _judged[key]


def _test(folder: Path, digest: str, runs: list[Path]) -> Verdict | None:
    miners, _broken = discover()
    miner = next((m for m in miners.values() if m.folder == folder), None)
    if miner is None:
        return None
    readable = tuple(run for run in runs if run.exists())
    try:
        report = miner_test(miner, runs=[str(run) for run in readable])
    except (CorpusError, MinerError):  # a recorded run it cannot read must not stop every miner's acceptance
        report, readable = miner_test(miner), ()
    if not report.passed or report.backtest is None or report.mutation is None:
        failed = [f"{check.name}: {check.detail}" for check in report.checks if not check.passed]
        return Verdict(miner, digest, None, "; ".join(failed)[:1000] or "its test did not run", readable)
    record = report.backtest.record()
    score = report.mutation.report.score
    acceptance = MinerAcceptance(
        miner=miner.name,
        scope=miner.scope,
        backtest=record.summary(),
        mutation_score=1.0 if score is None else score,
        mutation_floor=report.mutation.report.floor,
        test_passed=True,
        digest=digest,
    )
    gate = Gate(miner, record.kappa_star, digest, MinerAccepted(acceptance=acceptance), miner.rules())
    return Verdict(miner, digest, gate, "", readable)


GATES_FRESH_S = 2.0
"""How long a worker reuses the miner versions it found before looking at the miners' folders again (every
run it mines asks; a miner published meanwhile mines from the next look on)."""

_looked: dict[str | None, tuple[float, list[tuple[Miner, str]]]] = {}


def _versions(extra: str | None, max_age_s: float) -> list[tuple[Miner, str]]:
    """Every discovered miner of harness runs with the digest of its files (as found at most ``max_age_s`` ago)."""
    seen = _looked.get(extra)
    if seen is not None and time.monotonic() - seen[0] < max_age_s:
        return seen[1]
    miners, _broken = discover(extra)
    found = [(miner, miner_digest(miner)) for miner in miners.values() if JSONL in miner.corpus]
    _looked[extra] = (time.monotonic(), found)
    return found


def accepted_gates(
    extra: str | None = None, max_age_s: float = GATES_FRESH_S, runs: RecordedPaths | None = None
) -> list[Gate]:
    """Every discovered miner that passes its test, with the knee its backtest fitted (as found at most
    ``max_age_s`` ago; 0 looks now); ``runs``: the recorded runs a mutant must not change to be equivalent."""
    judged = [_judge(miner.folder, digest, runs) for miner, digest in _versions(extra, max_age_s)]
    return [verdict.gate for verdict in judged if verdict is not None and verdict.gate is not None]


_followed: dict[tuple[str, str, str, str], Gate | None] = {}
"""(event log, tenant, miner, digest) -> the gate the recorded verdict makes of that version (None: refused)."""


def fleet_gates(store: SqlEventStore, tenant: str, max_age_s: float = GATES_FRESH_S) -> list[Gate]:
    """The gates of the fleet: for each discovered miner version, the verdict recorded in the event log. A
    version with no verdict yet is judged here on the runs the log holds, and the verdict appended under
    one message id per version, so that when two workers judge it at once the first append is the one
    both follow. A recorded verdict never changes, so each worker reads it once."""
    gates: list[Gate] = []
    for miner, digest in _versions(None, max_age_s):
        key = (str(store.engine.url), tenant, miner.name, digest)
        if key not in _followed:
            _followed[key] = _follow(store, tenant, miner, digest)
        if (gate := _followed[key]) is not None:
            gates.append(gate)
    return gates


def _verdict_id(digest: str) -> str:
    return f"accept-{digest[:48]}"


def _follow(store: SqlEventStore, tenant: str, miner: Miner, digest: str) -> Gate | None:
    recorded = _recorded(store, miner.name, digest)
    if recorded is None:
        ids = {run.path: run.run for run in recorded_runs(store)}
        verdict = _judge(miner.folder, digest, lambda: list(ids))
        if verdict is None:
            return None
        judged_runs = tuple(sorted(ids[path] for path in verdict.runs if path in ids))
        event: MinerAccepted | MinerRefused
        if verdict.gate is not None:
            acceptance = verdict.gate.accepted.acceptance.model_copy(update={"judged_runs": judged_runs})
            event = MinerAccepted(acceptance=acceptance)
        else:
            event = MinerRefused(miner=miner.name, digest=digest, reason=verdict.reason, judged_runs=judged_runs)
        meta = Metadata(producer="miner.accept", message_id=_verdict_id(digest), tenant=tenant)
        store.commit([StreamWrite(f"miner/{miner.name}", [event])], meta)  # appends nothing if one is there
        recorded = _recorded(store, miner.name, digest)
        if recorded is None:
            return None
    if not isinstance(recorded, MinerAccepted):
        return None
    knee = recorded.acceptance.backtest.kappa_star
    return Gate(miner, knee, digest, recorded, miner.rules())


def _recorded(store: SqlEventStore, name: str, digest: str) -> MinerAccepted | MinerRefused | None:
    """The verdict recorded on this version of the miner, if any."""
    wanted = _verdict_id(digest)
    for stored in store.read_stream(f"miner/{name}"):
        if stored.meta.get("message_id") == wanted and stored.type in (MinerAccepted.TYPE, MinerRefused.TYPE):
            event = stored.decode()
            if isinstance(event, MinerAccepted | MinerRefused):
                return event
    return None


def finding_key(finding: Finding, run: str) -> tuple[str, str, str, str]:
    """Findings are deduplicated by (miner, rule, subject, run)."""
    subject = "|".join(arg.model_dump_json() for arg in finding.subject)
    return (finding.miner, finding.rule, subject, run)


def mine_run(item: CorpusItem, gates: Iterable[Gate]) -> list[Finding]:
    """Every finding of every gate on one run (read once for all of them)."""
    found: list[Finding] = []
    gates = list(gates)
    shared = item.read_once() if len(gates) > 1 else item
    for gate in gates:
        extracted = extract_facts(gate.miner, [shared])
        found.extend(find(gate.miner, gate.rules, extracted, gate.knee))
    return found
