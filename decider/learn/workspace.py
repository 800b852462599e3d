"""The learning pipeline's files under ``<state>/learn/``: the current label set, the analysed units
(the memory's input) and reports. Every file is keyed by the label set's digest, so a stale memory is never
read against new labels.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ouroboros_gates.decider.analyse import Analysed
from ouroboros_gates.decider.learn.errors import LearnError
from ouroboros_gates.decider.learn.labels import LabelSet, build_labels
from ouroboros_gates.decider.learn.materialise import from_json, to_json

__all__ = ["Workspace"]


@dataclass(frozen=True)
class Workspace:
    """``<state>/learn``."""

    root: Path

    @property
    def current(self) -> Path:
        """What ``ouro learn labels`` read last."""
        return self.root / "labels" / "current.json"

    def save_labels(self, labels: LabelSet, dirs: list[Path], allow_list: Path, include_title: bool) -> Path:
        """The snapshot ``labels/<digest>.jsonl`` and the pointer to it."""
        folder = self.root / "labels"
        folder.mkdir(parents=True, exist_ok=True)
        snapshot = folder / f"{labels.digest}.jsonl"
        rows = []
        for u in labels.units:
            row = u.row()
            row.pop("code"), row.pop("base_code")
            rows.append(json.dumps(row, sort_keys=True))
        snapshot.write_text("\n".join(rows) + "\n")
        pointer = {
            "digest": labels.digest,
            "dirs": [str(d.resolve()) for d in dirs],
            "allow_list": str(allow_list.resolve()),
            "include_title": include_title,
            "summary": labels.summary(),
        }
        self.current.write_text(json.dumps(pointer, indent=1, sort_keys=True) + "\n")
        return snapshot

    def pointer(self) -> dict[str, Any]:
        """The current label set's pointer, or an error saying to run ``ouro learn labels``."""
        if not self.current.is_file():
            raise LearnError(f"{self.current}: no label set; run `ouro learn labels` first")
        data: dict[str, Any] = json.loads(self.current.read_text())
        return data

    def labels(self) -> LabelSet:
        """The current label set, rebuilt from its sources and checked against its digest."""
        p = self.pointer()
        labels = build_labels(
            [Path(d) for d in p["dirs"]], Path(p["allow_list"]), include_title=p["include_title"]
        )
        if labels.digest != p["digest"]:
            raise LearnError(f"{self.current}: the sources changed since `ouro learn labels`; run it again")
        return labels

    def memory_file(self, digest: str) -> Path:
        """Analysed units for a label set."""
        return self.root / "memory" / f"{digest}.jsonl"

    def save_analysed(self, digest: str, analysed: dict[str, Analysed | None]) -> Path:
        """One line per unit: ``{"uid", "analysed"}`` (null: a reach miss)."""
        path = self.memory_file(digest)
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [
            json.dumps({"uid": uid, "analysed": to_json(a)}, sort_keys=True)
            for uid, a in sorted(analysed.items())
        ]
        path.write_text("\n".join(lines) + "\n")
        return path

    def analysed(self, digest: str) -> dict[str, Analysed | None]:
        """The analysed units of a label set, or an error saying to run ``ouro learn memory build``."""
        path = self.memory_file(digest)
        if not path.is_file():
            raise LearnError(f"{path}: no memory for label set {digest[:12]}; run `ouro learn memory build`")
        out = {}
        for line in path.read_text().splitlines():
            if line:
                row = json.loads(line)
                out[row["uid"]] = from_json(row["analysed"])
        return out

    def report_dir(self) -> Path:
        """Where reports go."""
        path = self.root / "reports"
        path.mkdir(parents=True, exist_ok=True)
        return path
