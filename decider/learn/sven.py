"""Importer for the SVEN JSONL shape: one vulnerable/fixed function pair per line.

Each line has ``func_name``, ``func_src_before`` (vulnerable), ``func_src_after`` (fixed),
``commit_link`` (``github.com/owner/name/commit/<sha>``: the repository group), ``file_name``,
``vul_type`` (``cwe-089``) and ``line_changes`` (``deleted``/``added`` lines with ``line_no``). The
code belongs to each repository, so its licence is recorded as unknown and it never ships.

Two artefacts of SVEN's extraction are repaired the same way on both sides, whatever the label: a C or C++
function whose return type stood on the line before its name (``static int`` / ``name(...)``) starts at its
name, which no C parser reads as a definition, so such a text gets the return type ``int`` on a line of its
own (the changed lines move down by one); and a C++ ``func_name`` spelled ``ns::Class::method`` becomes the
name the decider gives the function it defines (``Class.method``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ouroboros_gates.decider.languages import parse_source, simple_name
from ouroboros_gates.decider.learn.errors import CatalogError
from ouroboros_gates.decider.learn.pairs import Pair, Side
from ouroboros_gates.schemas import LabelTier, Provenance

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
    ".py": "python",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".js": "javascript",
    ".ts": "typescript",
    ".java": "java",
    ".php": "php",
}


def language_of(file_name: str) -> str:
    """The language of a file by its extension (``unknown`` otherwise)."""
    return _EXTENSIONS.get(Path(file_name).suffix.lower(), "unknown")


def _first_line(changes: dict[str, Any]) -> int:
    lines = [int(c["line_no"]) for c in changes.get("deleted", []) or changes.get("added", [])]
    return min(lines) if lines else 1


_STARTS_AT_NAME = re.compile(r"\A\s*[A-Za-z_][\w:~]*\s*\(")


def _defines(language: str, code: str) -> list[str]:
    return [
        f.name for f in parse_source(f"f.{language}", language, code.encode()).functions if not f.is_global
    ]


def _with_return_type(language: str, code: str) -> tuple[str, int]:
    """A C/C++ function's text that starts at its name and reads as no definition, with ``int`` before it;
    and the lines added."""
    if language in ("c", "cpp") and _STARTS_AT_NAME.match(code) and not _defines(language, code):
        return "int\n" + code, 1
    return code, 0


def _defined_name(language: str, code: str, name: str) -> str:
    """The decider's name of the function ``code`` defines whose last segment is ``name``'s (else
    ``name``)."""
    if not _qualified_c(language, name):
        return name
    last = name.rsplit("::", 1)[-1]
    found = [defined for defined in _defines(language, code) if simple_name(defined) == last]
    return found[0] if len(found) == 1 else name


def _qualified_c(language: str, name: str) -> bool:
    """Whether a C or C++ function name is qualified (``ns::f``): the decider names it by what the code
    defines."""
    return language in ("c", "cpp") and "::" in name


def sven_pair(row: dict[str, Any], name: str) -> Pair:
    """One SVEN row as a pair (the commit sha becomes both pins' provenance, not a feature)."""
    link = str(row["commit_link"])
    repository = link.split("/commit/", 1)[0]
    vul_type = str(row["vul_type"]).lower()
    language = language_of(str(row["file_name"]))
    before, moved_before = _with_return_type(language, str(row["func_src_before"]))
    after, moved_after = _with_return_type(language, str(row["func_src_after"]))
    changes = row.get("line_changes") or {}
    return Pair(
        name=name,
        kind="pair",
        repository=repository,
        language=language,
        family=CWE_FAMILY.get(vul_type, "unknown"),
        function=_defined_name(language, before, str(row["func_name"])),
        line=_first_line(changes) + (moved_before if changes.get("deleted") else moved_after),
        tier=LabelTier.ADVISORY,
        provenance=Provenance.HUMAN,
        licence="unknown",
        before=Side(code=before),
        after=Side(code=after),
        unscorable=row["func_src_before"] == row["func_src_after"],
    )


def load_sven(directory: Path) -> list[Pair]:
    """Every pair in ``directory/*.jsonl``; a bad line names its file and line number."""
    return [pair for file in sorted(directory.glob("*.jsonl")) for pair in _pairs_of(file)]


def _pairs_of(file: Path) -> list[Pair]:
    """The pairs of one JSON-lines file, each named ``stem:line``; a bad line names the file and line."""
    pairs = []
    for n, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            pairs.append(sven_pair(json.loads(line), f"{file.stem}:{n}"))
        except (KeyError, TypeError, ValueError) as exc:
            raise CatalogError(f"{file}:{n}: {exc}") from exc
    return pairs
