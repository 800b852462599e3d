"""Running a registered experiment: every frozen unit in both arms (paired), the arm order per unit a seeded
coin, each arm under its own ceiling, outcomes per (unit, arm) with their spend.

Arms are programs. The response cache is shared, so an arm whose prompts were asked before (the incumbent's
evaluation, or an earlier run) replays at $0. An arm that reaches its ceiling stops: the run is incomplete
and the analysis records no decision.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ouroboros_gates.decider.analyse import Analysed
from ouroboros_gates.decider.decide import Decided
from ouroboros_gates.decider.learn.artifacts import load_program_file
from ouroboros_gates.decider.learn.errors import RegistrationError
from ouroboros_gates.decider.learn.experiments import Outcome, analyse, arm_order
from ouroboros_gates.decider.learn.labels import LabelledUnit
from ouroboros_gates.decider.learn.programs import decide_units
from ouroboros_gates.decider.learn.registration import Manifest
from ouroboros_gates.decider.memory import Memory
from ouroboros_gates.decider.program import Program
from ouroboros_gates.llm import MeteredClient

__all__ = ["METRICS", "load_outcomes", "outcome_of", "run_arms", "write_result"]

METRICS = ("correct", "flagged")


def outcome_of(metric: str, unit: LabelledUnit, decided: Decided) -> int:
    """1 when the arm succeeded on the unit: ``correct`` (the majority verdict is the label) or
    ``flagged``."""
    verdict = decided.decision.verdict
    if metric == "flagged":
        return int(verdict == "vulnerable")
    return int(verdict == ("vulnerable" if unit.y else "not_vulnerable"))


def _program(manifest: Manifest, arm: str, shelf: Callable[[str], Program]) -> Program:
    ref = str(manifest.arms[arm].get("program", ""))
    if not ref:
        raise RegistrationError(f"{manifest.path}: arms.{arm}.program: missing")
    path = Path(ref) if Path(ref).is_absolute() else manifest.path.parent / ref
    return load_program_file(path) if path.is_file() else shelf(ref)


def run_arms(
    manifest: Manifest,
    units: Sequence[LabelledUnit],
    analysed: Mapping[str, Analysed | None],
    memory: Memory,
    clients: Mapping[str, MeteredClient],
    shelf: Callable[[str], Program],
) -> tuple[list[dict[str, Any]], str | None]:
    """Outcome rows ``{unit, group, arm, outcome, usd, cached}`` and why the run is incomplete (None:
    complete)."""
    _check_metric(manifest)
    programs = {arm: _program(manifest, arm, shelf) for arm in ("A", "B")}
    rows: list[dict[str, Any]] = []
    for unit in units:
        for arm in arm_order(unit.uid, manifest.seed):
            client = clients[arm]
            before = client.spent_usd
            decided = decide_units(programs[arm], [unit], analysed, memory, client=client).get(unit.uid)
            if decided is None:
                continue  # a reach miss: no candidate to decide, in either arm
            if _budget_reached(decided):
                return rows, f"arm {arm} stopped at ${client.spent_usd:.4f}"
            rows.append(
                _row(
                    unit, arm, outcome_of(manifest.metric, unit, decided), client.spent_usd - before, decided
                )
            )
    return rows, None


def _check_metric(manifest: Manifest) -> None:
    """The experiment's metric must be one the arms can be scored on."""
    if manifest.metric not in METRICS:
        raise RegistrationError(
            f"{manifest.path}: experiment.metric: {manifest.metric!r} is not one of {METRICS}"
        )


def _budget_reached(decided: Decided) -> bool:
    """Whether the decision fell back because the arm's budget ran out."""
    return bool(decided.fallback and "budget" in decided.fallback)


def _row(unit: LabelledUnit, arm: str, outcome: int, usd: float, decided: Decided) -> dict[str, Any]:
    """One outcome row: the unit, its group, the arm, its outcome, what it cost and whether it was cached."""
    return {
        "unit": unit.uid,
        "group": unit.group,
        "arm": arm,
        "outcome": outcome,
        "usd": round(usd, 8),
        "cached": decided.decision.cached,
    }


def load_outcomes(rows: Sequence[dict[str, Any]]) -> list[Outcome]:
    """Paired outcomes (units present in both arms)."""
    by_unit = _by_unit(rows)
    return [
        Outcome(
            unit=u,
            group=arms["A"]["group"],
            a=arms["A"]["outcome"],
            b=arms["B"]["outcome"],
            usd_a=arms["A"]["usd"],
            usd_b=arms["B"]["usd"],
        )
        for u, arms in sorted(by_unit.items())
        if set(arms) == {"A", "B"}
    ]


def _by_unit(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """Each unit's row per arm (a later row of the same arm replaces an earlier one)."""
    by_unit: dict[str, dict[str, dict[str, Any]]] = {}
    for row in rows:
        by_unit.setdefault(row["unit"], {})[row["arm"]] = row
    return by_unit


def write_result(
    manifest: Manifest,
    rows: Sequence[dict[str, Any]],
    incomplete: str | None,
    registered: Any,
    out: Path,
    *,
    resamples: int = 10000,
) -> dict[str, Any]:
    """Analyse and write ``outcomes.jsonl`` and ``result.json``."""
    outcomes = load_outcomes(rows)
    result = analyse(
        outcomes,
        seed=manifest.seed,
        resamples=resamples,
        cost_only=manifest.cost_only,
        margin=manifest.margin,
        incomplete=incomplete,
    )
    result = {
        "experiment": manifest.id,
        "metric": manifest.metric,
        "manifest_sha256": registered.manifest_sha256,
        "units_sha256": registered.units_sha256,
        "code_commit": registered.code_commit,
        **result,
        "arms": {arm: dict(spec) for arm, spec in manifest.arms.items()},
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "outcomes.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    (out / "result.json").write_text(json.dumps(result, indent=1, sort_keys=True, default=_plain) + "\n")
    return result


def _plain(value: Any) -> Any:
    return asdict(value) if hasattr(value, "__dataclass_fields__") else str(value)
