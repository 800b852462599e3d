"""The fleet's acceptance of miners judges mutation equivalence on the runs its log holds; a recorded run it
cannot read leaves the judgement to the fixtures instead of stopping it."""

from __future__ import annotations

from pathlib import Path

import pytest

from workers.miner import mine


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
