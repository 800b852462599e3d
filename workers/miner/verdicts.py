"""The verdicts the event log holds on miner versions, and the gates they make.

``miner.accept`` appends a version's verdict (``MinerAccepted`` or ``MinerRefused``, naming the digest of
the files judged) to the miner's stream ``miner/<name>``. Two workers may judge one version differently (the
runs recorded differ from one moment to the next), so the first verdict recorded on a version is the one
every worker follows, and ``miner.accept`` appends to a stream only as it read it: a verdict another worker
recorded meanwhile turns its append into a ``ConcurrencyError``, and its retry follows that verdict.

A verdict once recorded never changes, so a worker reads each one once (``KnownVerdicts``, one per worker
process, like its catalogue): recording and mining a run read no verdict stream once every version found
has its verdict.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from weakref import WeakKeyDictionary

from ouroboros_gates.events import EventStore, StoredEvent, StreamWrite
from ouroboros_gates.miners import Rules
from ouroboros_gates.schemas import MinerAccepted, MinerRefused
from ouroboros_gates.workers.miner.catalogue import MinerVersion
from ouroboros_gates.workers.miner.mine import Gate

__all__ = [
    "KnownVerdicts",
    "Verdict",
    "Verdicts",
    "fleet_gates",
    "read_verdicts",
    "verdict_stream",
    "verdict_writes",
]

Verdict = MinerAccepted | MinerRefused


def verdict_stream(name: str) -> str:
    """The stream of one miner's verdicts."""
    return f"miner/{name}"


@dataclass(frozen=True)
class Verdicts:
    """The first verdict recorded on each version of the miners read, and each miner stream's version then."""

    recorded: Mapping[tuple[str, str], Verdict]
    streams: Mapping[str, int]

    def of(self, version: MinerVersion) -> Verdict | None:
        """The verdict every worker follows on ``version`` (None: not judged yet)."""
        return self.recorded.get((version.name, version.digest))

    def pending(self, versions: Iterable[MinerVersion]) -> list[MinerVersion]:
        """The versions with no verdict yet."""
        return [version for version in versions if self.of(version) is None]


def read_verdicts(store: EventStore, versions: Iterable[MinerVersion]) -> Verdicts:
    """The verdicts recorded on the miners of ``versions`` (each miner's stream read once)."""
    recorded: dict[tuple[str, str], Verdict] = {}
    streams: dict[str, int] = {}
    for name in sorted({version.name for version in versions}):
        stored = store.read_stream(verdict_stream(name))
        streams[name] = stored[-1].version if stored else 0
        for event in stored:
            judged = _judged(event)
            if judged is not None:
                recorded.setdefault((name, judged[0]), judged[1])  # the first on a version stands
    return Verdicts(recorded, streams)


class KnownVerdicts:
    """The verdicts a worker has read, per event log: each is read once, since a recorded verdict never
    changes."""

    def __init__(self) -> None:
        self._known: WeakKeyDictionary[EventStore, dict[tuple[str, str], Verdict]] = WeakKeyDictionary()

    def of(self, store: EventStore, versions: Sequence[MinerVersion]) -> Verdicts:
        """The verdicts on ``versions``: the log is read only when one of them has none known yet. Not for an
        append (no stream versions): ``miner.accept`` reads the log itself (``read_verdicts``)."""
        known = self._known.setdefault(store, {})
        if any((version.name, version.digest) not in known for version in versions):
            known.update(read_verdicts(store, versions).recorded)
        return Verdicts(dict(known), {})


def _judged(event: StoredEvent) -> tuple[str, Verdict] | None:
    """The digest a verdict names with the verdict (None: not a verdict, or one recorded without a digest)."""
    if event.type == MinerRefused.TYPE:
        refused = event.decode_as(MinerRefused)
        return refused.digest, refused
    if event.type == MinerAccepted.TYPE:
        accepted = event.decode_as(MinerAccepted)
        digest = accepted.acceptance.digest
        return None if digest is None else (digest, accepted)
    return None


def verdict_writes(verdicts: Verdicts, judged: Sequence[tuple[MinerVersion, Verdict]]) -> list[StreamWrite]:
    """The appends of new verdicts, one per miner, each expecting the stream as it was read."""
    by_miner: dict[str, list[Verdict]] = {}
    for version, verdict in judged:
        by_miner.setdefault(version.name, []).append(verdict)
    return [
        StreamWrite(verdict_stream(name), events, expected_version=verdicts.streams.get(name, 0))
        for name, events in by_miner.items()
    ]


def fleet_gates(
    versions: Iterable[MinerVersion], verdicts: Verdicts, rules: Callable[[MinerVersion], Rules]
) -> list[Gate]:
    """The gates of the fleet: each version whose recorded verdict accepted it, with the knee it was accepted
    on (a refused version, or one not judged yet, is no gate)."""
    return [
        Gate.of(version, accepted, rules(version))
        for version in versions
        if isinstance(accepted := verdicts.of(version), MinerAccepted)
    ]
