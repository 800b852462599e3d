"""Pre-registration of experiments: a manifest and a frozen units file, both committed at HEAD.

    [experiment]                         experiments/<id>.toml
    id = "exp-002-k3"
    hypothesis = "three samples rank introducing deltas better than one"
    units_file = "experiments/exp-002-k3.units.jsonl"
    pairing = "paired"                   every unit in both arms
    cluster = "repository"               the resampling unit of intervals
    order = {randomise = "per_unit", seed = 1}
    metric = "block_at_0.5"              the per-unit outcome: 1 when the arm's score reaches 0.5
    cost_only = false                    true: decided by TOST (equivalence) and the cost interval
    margin = 0.05
    budget_usd = {total = 2.0, per_arm = 1.0}
    [arms.A]                             the incumbent: its cached responses replay at $0
    program = "programs/<sha>.json"
    [arms.B]
    program = "programs/<sha>.json"

Registration refuses unless both files are committed at HEAD with exactly the content on disk; their
sha256 digests and HEAD are recorded as an ``ExperimentRegistered`` event, and a run is refused when
either file no longer has the registered digest.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ouroboros_gates.decider.learn.errors import RegistrationError
from ouroboros_gates.events import EventStore, Metadata, StreamWrite
from ouroboros_gates.forge.git import git
from ouroboros_gates.schemas import ExperimentRegistered

__all__ = [
    "Manifest",
    "committed",
    "find_registration",
    "load_manifest",
    "load_units",
    "register",
    "verify_registered",
]


@dataclass(frozen=True)
class Manifest:
    """A parsed manifest."""

    id: str
    path: Path
    units_file: Path
    arms: dict[str, dict[str, Any]]
    seed: int
    metric: str
    cost_only: bool
    margin: float
    budget_total: float
    budget_per_arm: float
    pairing: str


def _experiment(doc: dict[str, Any], path: Path) -> dict[str, Any]:
    """The ``[experiment]`` table, with the strings every manifest names."""
    e = doc.get("experiment")
    if not isinstance(e, dict):
        raise RegistrationError(f"{path}: [experiment]: missing")
    for key in ("id", "hypothesis", "units_file", "metric"):
        if not isinstance(e.get(key), str) or not e[key]:
            raise RegistrationError(f"{path}: experiment.{key}: missing")
    return e


def _check_budget(budget: dict[str, Any], path: Path) -> None:
    total, per_arm = float(budget.get("total", 0.0)), float(budget.get("per_arm", 0.0))
    if total and per_arm and 2 * per_arm > total:
        raise RegistrationError(
            f"{path}: experiment.budget_usd: two arms of {per_arm} exceed the total {total}"
        )


def load_manifest(path: Path) -> Manifest:
    """Read and check a manifest; errors name the file and the field."""
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise RegistrationError(f"{path}: {exc}") from exc
    e = _experiment(doc, path)
    arms = _arms(doc, path)
    pairing = e.get("pairing", "paired")
    if pairing != "paired":
        raise RegistrationError(f"{path}: experiment.pairing: only 'paired' is run here")
    budget = e.get("budget_usd", {})
    _check_budget(budget, path)
    return Manifest(
        id=e["id"],
        path=path,
        units_file=_relative(path, e["units_file"]),
        arms=arms,
        seed=int(e.get("order", {}).get("seed", 0)),
        metric=e["metric"],
        cost_only=bool(e.get("cost_only", False)),
        margin=float(e.get("margin", 0.05)),
        budget_total=float(budget.get("total", 0.0)),
        budget_per_arm=float(budget.get("per_arm", 0.0)),
        pairing=pairing,
    )


def _arms(doc: dict[str, Any], path: Path) -> dict[str, dict[str, Any]]:
    """The ``[arms]`` table: exactly arms A and B."""
    arms = doc.get("arms")
    if not isinstance(arms, dict) or set(arms) != {"A", "B"}:
        raise RegistrationError(f"{path}: arms: exactly [arms.A] and [arms.B]")
    return arms


def _relative(manifest: Path, name: str) -> Path:
    root = _git_root(manifest.parent)
    return (root / name) if not Path(name).is_absolute() else Path(name)


def _git(cwd: Path, *args: str) -> bytes:
    done = git(*args, cwd=cwd, check=False, user_config=True)
    if done.returncode != 0:
        raise RegistrationError(f"git {' '.join(args)}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def _git_root(path: Path) -> Path:
    return Path(_git(path, "rev-parse", "--show-toplevel").decode().strip())


def load_units(path: Path) -> list[dict[str, str]]:
    """The frozen units: one JSON object per line with at least ``unit`` and ``group``."""
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            row = json.loads(line)
            if not _is_unit(row):
                raise RegistrationError(f'{path}:{n}: a unit is {{"unit": …, "group": …}}')
            rows.append(row)
    return rows


def _is_unit(row: Any) -> bool:
    """Whether a parsed line is a unit: an object naming its unit and its group."""
    return isinstance(row, dict) and isinstance(row.get("unit"), str) and isinstance(row.get("group"), str)


def committed(path: Path) -> tuple[str, str]:
    """``(sha256, HEAD)`` when ``path`` is committed at HEAD with exactly its content on disk."""
    root = _git_root(path.parent)
    rel = path.resolve().relative_to(root.resolve()).as_posix()
    try:
        head = _git(root, "rev-parse", "--verify", "HEAD").decode().strip()
        at_head = _git(root, "show", f"HEAD:{rel}")
    except RegistrationError:
        raise RegistrationError(f"{path}: not committed at HEAD; commit it first") from None
    on_disk = path.read_bytes()
    if at_head != on_disk:
        raise RegistrationError(f"{path}: differs from HEAD; commit it first")
    return hashlib.sha256(on_disk).hexdigest(), head


def register(manifest_path: Path, store: EventStore) -> ExperimentRegistered:
    """Check both files are committed at HEAD and record their digests as an event."""
    manifest = load_manifest(manifest_path)
    manifest_sha, head = committed(manifest_path)
    units_sha, _ = committed(manifest.units_file)
    load_units(manifest.units_file)
    event = ExperimentRegistered(
        experiment=manifest.id, manifest_sha256=manifest_sha, units_sha256=units_sha, code_commit=head
    )
    store.commit([StreamWrite(f"experiment-{manifest.id}", [event])], Metadata(producer="ouro.experiment"))
    return event


def find_registration(store: EventStore, experiment: str) -> ExperimentRegistered:
    """The latest registration of an experiment, or an error saying it is not registered."""
    events = [e.decode() for e in store.read_stream(f"experiment-{experiment}")]
    found = [e for e in events if isinstance(e, ExperimentRegistered)]
    if not found:
        raise RegistrationError(
            f"experiment {experiment!r} is not registered; run `ouro experiment register`"
        )
    return found[-1]


def verify_registered(manifest: Manifest, registered: ExperimentRegistered) -> None:
    """Refuse a run whose manifest or units file no longer has the registered digest."""
    for path, digest, what in (
        (manifest.path, registered.manifest_sha256, "manifest"),
        (manifest.units_file, registered.units_sha256, "units file"),
    ):
        actual = hashlib.sha256(path.read_bytes()).hexdigest()
        if actual != digest:
            raise RegistrationError(
                f"{path}: the {what} changed since registration ({actual[:12]} ≠ {digest[:12]})"
            )
