"""``ouro experiment``: pre-registered paired experiments of two decider programs.

    ouro experiment register MANIFEST     record the manifest's and its units' digests (committed at HEAD)
    ouro experiment run MANIFEST          both arms on every frozen unit, paired, then the analysis
    ouro experiment analyse MANIFEST      the analysis of recorded outcomes again, at no model cost

Results go under ``<state>/learn/experiments/<id>/`` unless ``--out`` says otherwise. Bad input is one line on
stderr and exit status 2.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ouroboros_gates.ops.cli._output import print_json
from ouroboros_gates.ops.cli.learn import metered_client, workspace
from ouroboros_gates.schemas.errors import OuroError

if TYPE_CHECKING:
    from ouroboros_gates.decider.learn.labels import LabelledUnit

__all__ = ["experiment_app"]

experiment_app = typer.Typer(no_args_is_help=True, help="Pre-registered paired experiments.")
AsJson = Annotated[bool, typer.Option("--json", help="Print the result as JSON (what result.json holds).")]


@experiment_app.command("register")
def experiment_register(manifest: Annotated[Path, typer.Argument(help="experiments/<id>.toml")]) -> None:
    """Register an experiment whose manifest and units file are committed at HEAD (digests as an event)."""
    from ouroboros_gates.decider.learn.registration import register
    from ouroboros_gates.ops.cli._common import event_store

    event = register(manifest, event_store())
    print(
        f"registered {event.experiment}: manifest {event.manifest_sha256[:12]}, units "
        f"{event.units_sha256[:12]}, "
        f"at {event.code_commit[:12]}"
    )


def _result_dir(experiment: str, out: Path | None) -> Path:
    return out or workspace().root / "experiments" / experiment


@experiment_app.command("run")
def experiment_run(
    manifest: Annotated[Path, typer.Argument(help="experiments/<id>.toml (registered)")],
    out: Annotated[Path | None, typer.Option(help="Where result.json goes.")] = None,
    resamples: Annotated[int, typer.Option(min=100)] = 10000,
    as_json: AsJson = False,
) -> None:
    """Run both arms on every frozen unit (paired, seeded arm order), then analyse."""
    from ouroboros_gates.decider.learn import build_memory
    from ouroboros_gates.decider.learn.arms import run_arms, write_result
    from ouroboros_gates.decider.learn.artifacts import ProgramShelf
    from ouroboros_gates.decider.learn.registration import (
        find_registration,
        load_manifest,
        verify_registered,
    )
    from ouroboros_gates.ops.cli._common import event_store

    spec = load_manifest(manifest)
    registered = find_registration(event_store(), spec.id)
    verify_registered(spec, registered)
    ws = workspace()
    labels = ws.labels()
    units = _frozen_units(spec.units_file, labels.units)
    analysed = ws.analysed(labels.digest)
    memory, _ = build_memory(labels.units, analysed, labels.digest)
    clients = {arm: metered_client(spec.budget_per_arm or None, None) for arm in ("A", "B")}
    shelf = ProgramShelf(ws.root / "programs")
    rows, incomplete = run_arms(spec, units, analysed, memory, clients, shelf.program)
    result = write_result(spec, rows, incomplete, registered, _result_dir(spec.id, out), resamples=resamples)
    _print_result(result, as_json)


def _frozen_units(units_file: Path, labelled: Sequence[LabelledUnit]) -> list[LabelledUnit]:
    """The units the manifest froze, in its order; an error naming the first one the label set lacks."""
    from ouroboros_gates.decider.learn.registration import load_units

    wanted = [row["unit"] for row in load_units(units_file)]
    by_uid = {u.uid: u for u in labelled}
    _check_labelled(wanted, by_uid, units_file)
    return [by_uid[u] for u in wanted]


def _check_labelled(wanted: list[str], by_uid: Mapping[str, LabelledUnit], units_file: Path) -> None:
    """An error naming the first unit wanted that the current label set lacks."""
    missing = [uid for uid in wanted if uid not in by_uid]
    if missing:
        raise OuroError(f"{units_file}: unit {missing[0]!r} is not in the current label set")


@experiment_app.command("analyse")
def experiment_analyse(
    manifest: Annotated[Path, typer.Argument(help="experiments/<id>.toml (registered)")],
    out: Annotated[Path | None, typer.Option(help="Where outcomes.jsonl and result.json are.")] = None,
    resamples: Annotated[int, typer.Option(min=100)] = 10000,
    as_json: AsJson = False,
) -> None:
    """Analyse recorded outcomes again ($0): looks, McNemar, TOST and the decision."""
    from ouroboros_gates.decider.learn.arms import write_result
    from ouroboros_gates.decider.learn.registration import find_registration, load_manifest
    from ouroboros_gates.ops.cli._common import event_store

    spec = load_manifest(manifest)
    registered = find_registration(event_store(), spec.id)
    folder = _result_dir(spec.id, out)
    path = folder / "outcomes.jsonl"
    if not path.is_file():
        raise OuroError(f"{path}: no outcomes; run `ouro experiment run` first")
    rows = [json.loads(line) for line in path.read_text().splitlines() if line]
    previous = json.loads((folder / "result.json").read_text()) if (folder / "result.json").is_file() else {}
    result = write_result(spec, rows, previous.get("incomplete"), registered, folder, resamples=resamples)
    _print_result(result, as_json)


def _print_looks(looks: list[dict[str, Any]]) -> None:
    """Each interim look: its sample, B - A with its interval, and z against the boundary."""
    for look in looks:
        print(
            f"look {look['look']}: {look['repositories']} repositories, {look['units']} units, B - A = "
            f"{look['estimate']:+.3f} [{look['low']}, {look['high']}], z = {look['z']:.2f} (boundary "
            f"{look['boundary']:.3f})"
        )


def _print_result(result: dict[str, object], as_json: bool = False) -> None:
    if as_json:
        print_json(json.dumps(result, indent=1, sort_keys=True, default=str))
        return
    looks = result["looks"]
    assert isinstance(looks, list)
    _print_looks(looks)
    mcnemar = result["mcnemar"]
    assert isinstance(mcnemar, dict)
    print(f"McNemar exact: B only {mcnemar['b_only']}, A only {mcnemar['a_only']}, p = {mcnemar['p']:.4g}")
    print(f"spend: {result['spend']}")
    print(f"decision: {result['decision'] or 'none (' + str(result.get('incomplete')) + ')'}")
