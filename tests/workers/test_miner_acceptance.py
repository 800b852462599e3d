"""The fleet's acceptance of miners judges mutation equivalence on the runs its log holds; a recorded run it
cannot read leaves the judgement to the fixtures instead of stopping it; the first verdict recorded on a miner
version is the one every worker follows."""

from __future__ import annotations

from pathlib import Path

import pytest

from ouroboros_gates.events import SqlEventStore, ensure_schema
from ouroboros_gates.schemas import MinerAccepted, MinerRefused
from ouroboros_gates.workers.miner import mine


def test_a_recorded_run_that_cannot_be_read_does_not_stop_acceptance(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mine, "_judged", {})
    (tmp_path / "empty").mkdir()  # recorded once, its files gone since: no harness logs in it
    asked: list[int] = []

    def recorded() -> list[Path]:
        asked.append(1)
        return [tmp_path / "empty"]

    gates = mine.accepted_gates("", max_age_s=0, runs=recorded)
    assert {gate.miner.name for gate in gates} >= {"blind-edit", "self-match", "draft-pr-late"}
    assert len(asked) == len(gates)  # asked once per miner version judged, then kept
    mine.accepted_gates("", max_age_s=0, runs=recorded)
    assert len(asked) == len(gates)


def test_every_worker_follows_the_first_verdict_recorded_on_a_miner_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SqlEventStore.from_url(f"sqlite:///{tmp_path / 'events.sqlite'}")
    ensure_schema(store.engine)
    monkeypatch.setattr(mine, "_judged", {})
    monkeypatch.setattr(mine, "_followed", {})
    miner, digest = next((m, d) for m, d in mine._versions(None, 0) if m.name == "self-match")
    # The first worker judged this version on other runs than the next one will, and refused it.
    refusal = "mutation gate: a surviving mutant changes a verdict on a recorded run"
    mine._judged[(miner.folder, digest)] = mine.Verdict(miner, digest, None, refusal, ())
    first = {gate.miner.name for gate in mine.fleet_gates(store, "default", max_age_s=0)}
    assert "self-match" not in first and {"blind-edit", "draft-pr-late"} <= first

    # A second worker: its own test of the version passes, yet it follows the verdict the log holds.
    monkeypatch.setattr(mine, "_judged", {})
    monkeypatch.setattr(mine, "_followed", {})
    own = mine._judge(miner.folder, digest)
    assert own is not None and own.gate is not None
    second = {gate.miner.name for gate in mine.fleet_gates(store, "default", max_age_s=0)}
    assert second == first

    verdicts = [event.decode() for event in store.read_stream("miner/self-match")]
    assert [type(event) for event in verdicts] == [MinerRefused]
    assert isinstance(verdicts[0], MinerRefused) and verdicts[0].reason == refusal and verdicts[0].digest == digest
    accepted = [event.decode() for event in store.read_stream("miner/blind-edit")]
    assert len(accepted) == 1 and isinstance(accepted[0], MinerAccepted)
    assert accepted[0].acceptance.digest is not None
    store.close()
