"""Compiled-program artifacts: canonical JSON, content-addressed, indexed, adoptable.

``programs/<sha256>.json`` holds one artifact (sorted keys, no spaces: the same compile gives the same
bytes); ``programs/index.jsonl`` lists every version with what its compile spent; ``programs/adopted.json``
maps a profile to the adopted artifact. Adoption also puts the program into the decider's store (the
lookup's second place) and can export it into the package with only permissively licensed demonstrations.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ouroboros_gates.decider.learn.errors import LearnError
from ouroboros_gates.decider.learn.labels import LabelledUnit
from ouroboros_gates.decider.learn.pairs import PERMISSIVE
from ouroboros_gates.decider.program import OperatingPoint, Program
from ouroboros_gates.llm import canonical_json

__all__ = ["ProgramShelf", "canonical", "exportable", "load_program_file", "with_evaluation"]


def canonical(value: Any) -> bytes:
    """Canonical JSON bytes: sorted keys, no spaces, floats by ``repr``."""
    return canonical_json(value).encode()


class ProgramShelf:
    """The ``programs/`` folder."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def put(self, artifact: Mapping[str, Any], run: Mapping[str, Any]) -> str:
        """Write an artifact under its sha256 and index it with its run facts (spend, replay)."""
        body = canonical(artifact)
        sha = hashlib.sha256(body).hexdigest()
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / f"{sha}.json").write_bytes(body)
        line = {"artifact": sha, "program_id": artifact["program_id"], "profile": artifact["profile"], **run}
        with (self.root / "index.jsonl").open("a", encoding="utf-8") as index:
            index.write(json.dumps(line, sort_keys=True) + "\n")
        return sha

    def find(self, prefix: str) -> tuple[str, dict[str, Any]]:
        """The artifact whose sha starts with ``prefix`` (unique), and its content."""
        hits = self._artifacts(prefix)
        if len(hits) != 1:
            raise LearnError(
                f"program {prefix!r}: {'no' if not hits else 'more than one'} artifact in {self.root}"
            )
        data: dict[str, Any] = json.loads(hits[0].read_bytes())
        return hits[0].stem, data

    def _artifacts(self, prefix: str) -> list[Path]:
        """The artifact files whose sha starts with ``prefix`` (not the adopted record), sorted."""
        return sorted(p for p in self.root.glob(f"{prefix}*.json") if p.stem not in ("adopted",))

    def program(self, prefix: str) -> Program:
        """The program inside an artifact."""
        sha, data = self.find(prefix)
        return Program.from_json(json.dumps(data["program"]), f"{self.root / sha}.json")

    def adopt(self, prefix: str) -> tuple[str, Program]:
        """Record the artifact as adopted for its profile."""
        sha, data = self.find(prefix)
        path = self.root / "adopted.json"
        adopted = json.loads(path.read_text()) if path.is_file() else {}
        adopted[data["profile"]] = sha
        path.write_text(json.dumps(adopted, indent=1, sort_keys=True) + "\n")
        return sha, self.program(sha)


def exportable(program: Program, units: Mapping[str, LabelledUnit]) -> Program:
    """The program with only permissively licensed demonstrations (the others are dropped: their code is a
    third party's and may not ship)."""
    kept = tuple(
        d for d in program.demos if (u := units.get(d.example_id)) is not None and u.licence in PERMISSIVE
    )
    return replace(program, demos=kept)


def load_program_file(path: Path) -> Program:
    """A program from a program JSON file or from a compiled artifact."""
    try:
        body = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise LearnError(f"{path}: {exc}") from exc
    if isinstance(body, dict) and body.get("kind") == "compiled-program":
        return Program.from_json(json.dumps(body["program"]), str(path))
    return Program.from_json(path.read_text(), str(path))


def with_evaluation(program: Program, evaluation: Mapping[str, Any]) -> Program:
    """The program carrying the calibration and operating points its own evaluation chose (refitted on all
    out-of-fold predictions); BLOCK stays withheld where the evaluation withheld it, with the reason."""
    if evaluation.get("program", {}).get("id") != program.program_id:
        raise LearnError("the evaluation is of another program; evaluate this one first")
    adopted = evaluation["adopted"]
    calibration = {f: (p["a"], p["b"]) for f, p in adopted["calibration"]["per_family"].items()}
    points = {
        family: _operating_point(op, evaluation["families"].get(family, {}))
        for family, op in adopted["operating_points"].items()
    }
    return replace(program, calibration=calibration, operating_points=points)


def _withheld_because(op: Mapping[str, Any], stratum: Mapping[str, Any]) -> Any:
    """Why BLOCK is withheld: the stratum's reason, else why it is insufficient, else the points' own."""
    return stratum.get("block_reason") or stratum.get("insufficient") or op["block_reason"]


def _operating_point(op: Mapping[str, Any], stratum: Mapping[str, Any]) -> OperatingPoint:
    """A family's adopted points: BLOCK offered only where its stratum offered it, else the reason why not."""
    offered = bool(stratum.get("block_offered")) and op["block"] is not None
    reason = None if offered else _withheld_because(op, stratum)
    return OperatingPoint(
        advisory=op["advisory"] if op["advisory"] is not None else 1.0,
        block=op["block"],
        block_offered=offered,
        reason=reason,
    )
