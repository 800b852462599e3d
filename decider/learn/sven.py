"""Importer for the SVEN JSONL shape: one vulnerable/fixed function pair per line.

Each line has ``func_name``, ``func_src_before`` (vulnerable), ``func_src_after`` (fixed),
``commit_link`` (``github.com/owner/name/commit/<sha>``: the repository group), ``file_name``,
``vul_type`` (``cwe-089``) and ``line_changes`` (``deleted``/``added`` lines with ``line_no``). The
code belongs to each repository, so its licence is recorded as unknown and it never ships.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from decider.learn.errors import CatalogError
from decider.learn.pairs import Pair, Side
from schemas import LabelTier, Provenance

__all__ = ["CWE_FAMILY", "language_of", "load_sven", "sven_pair"]

CWE_FAMILY = {
    "cwe-022": "path_traversal",
    "cwe-078": "command_injection",
    "cwe-079": "xss",
    "cwe-089": "sql_injection",
    "cwe-125": "memory_safety",
    "cwe-190": "memory_safety",
    "cwe-416": "memory_safety",
    "cwe-476": "memory_safety",
    "cwe-787": "memory_safety",
}
_EXTENSIONS = {
    ".py": "python", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp",
    ".hh": "cpp", ".js": "javascript", ".ts": "typescript", ".java": "java", ".php": "php",
}  # fmt: skip


def language_of(file_name: str) -> str:
    """The language of a file by its extension (``unknown`` otherwise)."""
    return _EXTENSIONS.get(Path(file_name).suffix.lower(), "unknown")


def _first_line(changes: dict[str, Any]) -> int:
    lines = [int(c["line_no"]) for c in changes.get("deleted", []) or changes.get("added", [])]
    return min(lines) if lines else 1


def sven_pair(row: dict[str, Any], name: str) -> Pair:
    """One SVEN row as a pair (the commit sha becomes both pins' provenance, not a feature)."""
    link = str(row["commit_link"])
    repository = link.split("/commit/", 1)[0]
    vul_type = str(row["vul_type"]).lower()
    return Pair(
        name=name,
        kind="pair",
        repository=repository,
        language=language_of(str(row["file_name"])),
        family=CWE_FAMILY.get(vul_type, "unknown"),
        function=str(row["func_name"]),
        line=_first_line(row.get("line_changes") or {}),
        tier=LabelTier.ADVISORY,
        provenance=Provenance.HUMAN,
        licence="unknown",
        before=Side(code=str(row["func_src_before"])),
        after=Side(code=str(row["func_src_after"])),
        unscorable=row["func_src_before"] == row["func_src_after"],
    )


def load_sven(directory: Path) -> list[Pair]:
    """Every pair in ``directory/*.jsonl``; a bad line names its file and line number."""
    pairs = []
    for file in sorted(directory.glob("*.jsonl")):
        for n, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                pairs.append(sven_pair(json.loads(line), f"{file.stem}:{n}"))
            except (KeyError, TypeError, ValueError) as exc:
                raise CatalogError(f"{file}:{n}: {exc}") from exc
    return pairs
