"""The cases of a labelled benchmark: an expected-results CSV (``name, category, real (true/false), cwe`` per
case, lines starting with ``#`` are comments; the OWASP Benchmark's ``expectedresults-*.csv`` shape), each
row matched to the one file under the benchmark folder whose stem is its name; its family is the family of
its CWE."""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ouroboros_gates.decider.analyse import Analysed
from ouroboros_gates.decider.instruments import families
from ouroboros_gates.decider.languages import language_of
from ouroboros_gates.schemas.errors import OuroError

__all__ = ["Case", "family_candidates", "load_cases"]


@dataclass(frozen=True)
class Case:
    """One labelled case: its name, file (relative to the benchmark folder), category, family and label."""

    name: str
    path: str
    category: str
    family: str
    y: int

    @property
    def group(self) -> str:
        """Each case is its own repository group."""
        return f"case/{self.name}"


def load_cases(benchmark: Path, expected: Path) -> list[Case]:
    """The cases of an expected-results CSV, each matched to its file; a bad row is one error naming it."""
    if not benchmark.is_dir():
        raise OuroError(f"--benchmark: {benchmark}: no such directory")
    text = _read_expected(expected)
    files = _case_files(benchmark)
    cases = [
        _case(row, f"{expected}:{number}", files, benchmark)
        for number, row in enumerate(csv.reader(text.splitlines()), start=1)
        if _is_case_row(row)
    ]
    if not cases:
        raise OuroError(f"--expected: {expected}: no case")
    return cases


def _read_expected(expected: Path) -> str:
    """The text of the expected-results file; an unreadable one is an error naming it."""
    try:
        return expected.read_text(encoding="utf-8")
    except OSError as exc:
        raise OuroError(f"--expected: {expected}: {exc.strerror or exc}") from exc


def _is_case_row(row: Sequence[str]) -> bool:
    """Whether a CSV row holds a case: not blank, not a ``#`` comment."""
    return bool(row) and not row[0].lstrip().startswith("#")


def _case_files(benchmark: Path) -> dict[str, Path]:
    """The source files under the benchmark folder by stem (the first in sorted order wins)."""
    files: dict[str, Path] = {}
    for path in sorted(benchmark.rglob("*")):
        if path.is_file() and language_of(path.name) is not None:
            files.setdefault(path.stem, path)
    return files


def _case(row: Sequence[str], where: str, files: Mapping[str, Path], benchmark: Path) -> Case:
    """One row of the expected results (``where``: the file and line), matched to its file."""
    if len(row) < 4:
        raise OuroError(f"{where}: expected name, category, real, cwe; got {len(row)} field(s)")
    name, category, real, cwe = (field.strip() for field in row[:4])
    if real.lower() not in ("true", "false"):
        raise OuroError(f"{where}: real vulnerability {real!r} is not true or false")
    family = _family_of(cwe, where)
    found = files.get(name)
    if found is None:
        raise OuroError(f"{where}: no source file named {name}.* under {benchmark}")
    label = int(real.lower() == "true")
    return Case(name, found.relative_to(benchmark).as_posix(), category, family, label)


def _family_of(cwe: str, where: str) -> str:
    """The family of a row's CWE; a CWE that is no number or maps to no family is an error."""
    try:
        family = families().for_cwe(int(cwe))
    except ValueError as exc:
        raise OuroError(f"{where}: cwe {cwe!r} is not a number") from exc
    if family is None:
        raise OuroError(f"{where}: CWE {cwe} maps to no family in ruleset/families.toml")
    return family


def family_candidates(case: Case, analysed: Mapping[str, list[Analysed]]) -> list[Analysed]:
    """The candidates found in the case's file that are of the case's family."""
    return [a for a in analysed.get(case.name, []) if a.candidate.family == case.family]
