"""Mine one run with every accepted miner, and decide which miners are accepted.

A miner is accepted (and becomes a gate) only when its own test passes: check_rules, FN = 0 on the
walk-forward backtest, the mutation gate. Acceptance is decided once per version of the miner's files
(a digest of its folder) and recorded as a ``MinerAccepted`` event; the fitted κ* is the knee it mines
with. In the fleet the mutation test judges equivalence on the runs the event log holds when that
version is first judged, beside the fixtures (``miner_test(…, runs=…)``): a mutant that changes a
verdict on a recorded run is not equivalent.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from miners import CorpusItem, Miner, MinerError, Rules, discover, extract_facts, find, miner_test
from miners.corpus import JSONL
from miners.datalog import Value
from schemas import Finding, MinerAcceptance, MinerAccepted
from schemas.errors import CorpusError

__all__ = ["Gate", "accepted_gates", "finding_key", "mine_run", "miner_digest"]


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

_judged: dict[tuple[Path, str], Gate | None] = {}


def _judge(folder: Path, digest: str, runs: RecordedPaths | None = None) -> Gate | None:
    """The miner test's verdict for one version of a miner (kept: it does not change under it)."""
    key = (folder, digest)
    if key not in _judged:
        _judged[key] = _test(folder, digest, [str(path) for path in runs()] if runs is not None else [])
    return _judged[key]


def _test(folder: Path, digest: str, runs: list[str]) -> Gate | None:
    miners, _broken = discover()
    miner = next((m for m in miners.values() if m.folder == folder), None)
    if miner is None:
        return None
    try:
        report = miner_test(miner, runs=[run for run in runs if Path(run).exists()])
    except (CorpusError, MinerError):  # a recorded run it cannot read must not stop every miner's acceptance
        report = miner_test(miner)
    if not report.passed or report.backtest is None or report.mutation is None:
        return None
    record = report.backtest.record()
    score = report.mutation.report.score
    acceptance = MinerAcceptance(
        miner=miner.name,
        scope=miner.scope,
        backtest=record.summary(),
        mutation_score=1.0 if score is None else score,
        mutation_floor=report.mutation.report.floor,
        test_passed=True,
    )
    return Gate(miner, record.kappa_star, digest, MinerAccepted(acceptance=acceptance), miner.rules())


GATES_FRESH_S = 2.0
"""How long a worker reuses the accepted gates it found before looking at the miners' folders again (every
run it mines asks; a miner published meanwhile mines from the next look on)."""

_looked: dict[str | None, tuple[float, list[Gate]]] = {}


def accepted_gates(
    extra: str | None = None, max_age_s: float = GATES_FRESH_S, runs: RecordedPaths | None = None
) -> list[Gate]:
    """Every discovered miner that passes its test, with the knee its backtest fitted (as found at most
    ``max_age_s`` ago; 0 looks now); ``runs``: the recorded runs a mutant must not change to be equivalent."""
    seen = _looked.get(extra)
    if seen is not None and time.monotonic() - seen[0] < max_age_s:
        return seen[1]
    miners, _broken = discover(extra)
    judged = [_judge(miner.folder, miner_digest(miner), runs) for miner in miners.values() if JSONL in miner.corpus]
    gates = [gate for gate in judged if gate is not None]
    _looked[extra] = (time.monotonic(), gates)
    return gates


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
