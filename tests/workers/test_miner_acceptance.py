"""The fleet's acceptance of miners judges mutation equivalence on the runs its log holds; a recorded run it
cannot read leaves the judgement to the fixtures instead of stopping it; the first verdict recorded on a miner
version is the one every worker follows, and a version with a verdict in the log is not judged again."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from ouroboros_gates.events import ConcurrencyError, Metadata, SqlEventStore, ensure_schema
from ouroboros_gates.schemas import MinerAccepted, MinerRefused
from ouroboros_gates.schemas.errors import TransientError
from ouroboros_gates.workers.miner import accept
from ouroboros_gates.workers.miner.catalogue import Catalogue, MinerVersion
from ouroboros_gates.workers.miner.verdicts import fleet_gates, read_verdicts, verdict_writes

CHOSEN = {"self-match", "blind-edit", "draft-pr-late"}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqlEventStore]:
    sql = SqlEventStore.from_url(f"sqlite:///{tmp_path / 'events.sqlite'}")
    ensure_schema(sql.engine)
    yield sql
    sql.close()


def _versions(catalogue: Catalogue) -> tuple[MinerVersion, ...]:
    return tuple(version for version in catalogue.versions() if version.name in CHOSEN)


def test_a_recorded_run_that_cannot_be_read_does_not_stop_acceptance(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()  # recorded once, its files gone since: no harness logs in it
    asked: list[int] = []

    def recorded() -> list[Path]:
        asked.append(1)
        return [tmp_path / "empty"]

    gates = accept.accepted_gates("", runs=recorded)
    assert {gate.miner.name for gate in gates} >= {"blind-edit", "self-match", "draft-pr-late"}
    assert len(asked) == len(gates)  # asked once per miner version judged


def test_a_version_with_a_verdict_in_the_log_is_not_judged_again(
    tmp_path: Path, store: SqlEventStore
) -> None:
    (tmp_path / "empty").mkdir()
    asked: list[int] = []

    def run_ids() -> dict[Path, str]:
        asked.append(1)
        return {tmp_path / "empty": "gone"}

    versions = _versions(Catalogue(""))
    verdicts = read_verdicts(store, versions)
    judged = accept.judge_pending(verdicts.pending(versions), run_ids)
    store.commit(verdict_writes(verdicts, judged), Metadata("miner.accept", message_id="accept-test-1"))
    assert len(asked) == 1 and len(judged) == len(versions)
    again = read_verdicts(store, versions)
    assert again.pending(versions) == [] and accept.judge_pending(again.pending(versions), run_ids) == []
    assert len(asked) == 1
    assert all(isinstance(again.of(version), MinerAccepted) for version in versions)


def test_every_worker_follows_the_first_verdict_recorded_on_a_miner_version(store: SqlEventStore) -> None:
    catalogue = Catalogue(None, fresh_s=0)
    versions = _versions(catalogue)
    self_match = next(version for version in versions if version.name == "self-match")
    # The first worker judged this version on other runs than the next one will, and refused it.
    refusal = "mutation gate: a surviving mutant changes a verdict on a recorded run"

    def refusing(version: MinerVersion, runs: Sequence[Path]) -> accept.Judgement:
        return (
            accept.Judgement(version, None, refusal, ())
            if version is self_match
            else accept.judge(version, runs)
        )

    before = read_verdicts(store, versions)  # a second worker reads the log before the first one appends
    judged = accept.judge_pending(before.pending(versions), dict, by=refusing)
    store.commit(verdict_writes(before, judged), Metadata("miner.accept", message_id="accept-first-01"))
    first = {
        gate.miner.name for gate in fleet_gates(versions, read_verdicts(store, versions), catalogue.rules)
    }
    assert "self-match" not in first and {"blind-edit", "draft-pr-late"} <= first

    # The second worker: its own test of the version passes, yet it follows the verdict the log holds.
    own = accept.judge(self_match, [])
    assert own.acceptance is not None
    late = accept.judge_pending([self_match], dict)
    with pytest.raises(ConcurrencyError) as caught:  # its append expected the stream it read
        store.commit(verdict_writes(before, late), Metadata("miner.accept", message_id="accept-second-1"))
    assert isinstance(caught.value, TransientError)  # retried: the retry reads the log again and follows it
    retried = read_verdicts(store, versions)
    assert retried.pending(versions) == []
    second = {gate.miner.name for gate in fleet_gates(versions, retried, catalogue.rules)}
    assert second == first

    verdicts = [event.decode() for event in store.read_stream("miner/self-match")]
    assert [type(event) for event in verdicts] == [MinerRefused]
    assert isinstance(verdicts[0], MinerRefused) and verdicts[0].reason == refusal
    assert verdicts[0].digest == self_match.digest
    accepted = [event.decode() for event in store.read_stream("miner/blind-edit")]
    assert len(accepted) == 1 and isinstance(accepted[0], MinerAccepted)
    assert accepted[0].acceptance.digest is not None
