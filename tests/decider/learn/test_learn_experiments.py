"""Experiments: exact McNemar against hand-computed binomials, O'Brien-Fleming boundaries, the paired
cluster bootstrap on a fixture with a known difference, the decisions, and registration."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from ouroboros_gates.decider.learn.errors import RegistrationError
from ouroboros_gates.decider.learn.experiments import (
    Outcome,
    analyse,
    arm_order,
    binomial_cdf,
    mcnemar_exact,
    obrien_fleming,
    paired_bootstrap,
)
from ouroboros_gates.decider.learn.registration import (
    find_registration,
    load_manifest,
    register,
    verify_registered,
)
from ouroboros_gates.events import MemoryEventStore


def _outcomes(b_only: int, a_only: int, both: int = 0, neither: int = 0) -> list[Outcome]:
    rows = [(0, 1)] * b_only + [(1, 0)] * a_only + [(1, 1)] * both + [(0, 0)] * neither
    return [Outcome(f"u{i}", f"g{i}", a, b) for i, (a, b) in enumerate(rows)]


def test_mcnemar_exact_against_hand_computed_binomials() -> None:
    # b=1, c=9: P(X<=1 | n=10) = (1 + 10)/1024; two-sided p = 22/1024
    b, c, p = mcnemar_exact(_outcomes(1, 9, both=5))
    assert (b, c) == (1, 9) and p == pytest.approx(22 / 1024)
    # b=0, c=5: 2 * (1/32)
    assert mcnemar_exact(_outcomes(0, 5))[2] == pytest.approx(0.0625)
    # b=3, c=3: p = min(1, 2 * P(X<=3 | n=6)) = min(1, 2 * 42/64) = 1
    assert mcnemar_exact(_outcomes(3, 3))[2] == 1.0
    # b=2, c=10: P(X<=2 | n=12) = (1 + 12 + 66)/4096
    assert mcnemar_exact(_outcomes(10, 2))[2] == pytest.approx(2 * 79 / 4096)
    assert mcnemar_exact(_outcomes(0, 0, both=4)) == (0, 0, 1.0)
    assert binomial_cdf(2, 5) == pytest.approx(16 / 32)


def test_obrien_fleming_two_looks() -> None:
    first, final = obrien_fleming()
    assert round(first, 3) == 2.797 and round(final, 3) == 1.977


def test_paired_bootstrap_recovers_a_known_difference() -> None:
    # 40 repositories of 5 units; arm B succeeds on 2 more units of every repository than arm A: +0.4 exactly
    outcomes = []
    for g in range(40):
        for u in range(5):
            a = 1 if u == 0 else 0
            b = 1 if u <= 2 else 0
            outcomes.append(Outcome(f"{g}-{u}", f"repo{g}", a, b))
    est, low, high, se = paired_bootstrap(outcomes, resamples=2000, seed=3)
    assert est == pytest.approx(0.4)
    assert low == pytest.approx(0.4) and high == pytest.approx(0.4) and se == pytest.approx(0.0)
    # with repository-level noise the interval is wide but still holds the difference and excludes 0
    noisy = [Outcome(o.unit, o.group, o.a, o.b if int(o.group[4:]) % 4 else o.a) for o in outcomes]
    est, low, high, _ = paired_bootstrap(noisy, resamples=2000, seed=3)
    assert est == pytest.approx(0.3) and low is not None and high is not None
    assert 0 < low < 0.3 < high


def test_decisions_adopt_reject_inconclusive_equivalent() -> None:
    better = [Outcome(f"u{i}", f"g{i // 2}", 0, 1 if i % 3 else 0) for i in range(120)]
    assert analyse(better, resamples=500)["decision"] == "adopt"
    worse = [Outcome(o.unit, o.group, o.b, o.a) for o in better]
    assert analyse(worse, resamples=500)["decision"] == "reject"
    mixed = [Outcome(f"u{i}", f"g{i // 2}", i % 2, (i // 2) % 2) for i in range(40)]
    assert analyse(mixed, resamples=500)["decision"] == "inconclusive"
    cheaper = [Outcome(f"u{i}", f"g{i // 2}", i % 2, i % 2, usd_a=0.01, usd_b=0.004) for i in range(80)]
    result = analyse(cheaper, resamples=500, cost_only=True)
    assert result["decision"] == "equivalent" and result["tost"]["cost_high"] < 0
    stopped = analyse(better, resamples=500, incomplete="arm B stopped at $1.00")
    assert stopped["decision"] is None and stopped["incomplete"] == "arm B stopped at $1.00"
    looks = analyse(better, resamples=500)["looks"]
    assert [look["boundary"] for look in looks] == [
        pytest.approx(2.7965, abs=1e-3),
        pytest.approx(1.9774, abs=1e-3),
    ]


def test_arm_order_is_seeded_per_unit() -> None:
    orders = [arm_order(f"u{i}", 1) for i in range(200)]
    assert orders == [arm_order(f"u{i}", 1) for i in range(200)]
    assert 60 < sum(o == ("A", "B") for o in orders) < 140
    assert orders != [arm_order(f"u{i}", 2) for i in range(200)]


MANIFEST = """[experiment]
id = "exp-test"
hypothesis = "B answers better"
units_file = "experiments/exp-test.units.jsonl"
metric = "correct"
order = {seed = 1}
budget_usd = {total = 1.0, per_arm = 0.5}

[arms.A]
program = "a.json"

[arms.B]
program = "b.json"
"""


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), *args],
        check=True,
        capture_output=True,
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
            "PATH": "/usr/bin:/bin",
        },
    )


def test_registration_requires_both_files_committed_and_refuses_a_changed_run(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    (tmp_path / "experiments").mkdir()
    manifest = tmp_path / "experiments" / "exp-test.toml"
    units = tmp_path / "experiments" / "exp-test.units.jsonl"
    manifest.write_text(MANIFEST)
    units.write_text('{"unit": "u1", "group": "g1"}\n')
    store = MemoryEventStore()
    _git(tmp_path, "add", "experiments/exp-test.toml")
    _git(tmp_path, "commit", "-q", "-m", "manifest")
    with pytest.raises(RegistrationError, match=r"units\.jsonl: not committed at HEAD"):
        register(manifest, store)
    _git(tmp_path, "add", "experiments/exp-test.units.jsonl")
    _git(tmp_path, "commit", "-q", "-m", "units")
    units.write_text('{"unit": "u1", "group": "g1"}\n{"unit": "u2", "group": "g2"}\n')
    with pytest.raises(RegistrationError, match="differs from HEAD"):
        register(manifest, store)
    _git(tmp_path, "checkout", "-q", "--", ".")
    event = register(manifest, store)
    assert event.manifest_sha256 == hashlib.sha256(manifest.read_bytes()).hexdigest()
    assert event.units_sha256 == hashlib.sha256(units.read_bytes()).hexdigest()
    assert find_registration(store, "exp-test") == event
    verify_registered(load_manifest(manifest), event)
    units.write_text('{"unit": "u9", "group": "g9"}\n')
    with pytest.raises(RegistrationError, match="the units file changed since registration"):
        verify_registered(load_manifest(manifest), event)
    with pytest.raises(RegistrationError, match="not registered"):
        find_registration(store, "exp-other")
