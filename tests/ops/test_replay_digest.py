"""``ouro replay --rebuild`` says whether two runs reached the same state: its content digest leaves out log
positions and clock times, so two clean runs of the main job over the same input print the same one, while the
full ledger digest (every column) tells them apart."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from fleet_support import ROOT, run

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(600)]


def _digests(tmp_path: Path, name: str) -> tuple[str, str]:
    env = {
        k: v for k, v in os.environ.items() if k not in {"OURO_DATABASE_URL", "OURO_BROKER_URL", "OURO_FORGE"}
    }
    env = {**env, "OURO_STATE": str(tmp_path / name), "OURO_ROOTS": str(ROOT)}
    loop = run("loop", str(ROOT / "examples"), env=env, timeout_s=300)
    assert loop.returncode == 0, loop.stdout[-3000:] + loop.stderr[-2000:]
    replay = run("replay", "--rebuild", env=env)
    assert replay.returncode == 0, replay.stderr
    content = re.search(r"content digest ([0-9a-f]{64}) \((\d+) rows", replay.stdout)
    ledger = re.search(r"ledger digest ([0-9a-f]{64})", replay.stdout)
    assert content and ledger and int(content.group(2)) > 50, replay.stdout
    return content.group(1), ledger.group(1)


def test_two_clean_runs_of_the_main_job_have_the_same_content_digest(tmp_path: Path) -> None:
    first, second = _digests(tmp_path, "first"), _digests(tmp_path, "second")
    assert first[0] == second[0]
    assert (
        first[1] != second[1]
    )  # the stored rows differ in positions and times, which the content leaves out
