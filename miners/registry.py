"""Finding miners: the folders of this package and of ``OURO_MINERS_PATH``, each loaded on demand.

A miner is a folder ``<name>/`` (``<name>`` a Python identifier) holding ``extract.py``, ``rules.dl``,
``fixtures/`` and its generated ``backtest.md`` and ``mutation.md``. Installed miners are the folders
of ``miners/`` with an ``extract.py`` (the engine and contract folders excepted); a tenant keeps its
own miners outside the package in the directories of ``OURO_MINERS_PATH`` (``:``-separated), each a
miner folder or a directory of them, imported by file path so they need not be installed.

``extract.py`` declares the miner: ``NAME``, ``PACKAGE``, ``VERDICTS``, ``SCOPE``, ``CORPUS``,
``SEVERITY``, ``GATE`` and ``extract(item) -> Iterable[Fact]``, and optionally ``LOCAL`` (``True``: each
fact comes from one event read alone, so a gate keeps a session's facts line by line instead of extracting
the whole run on every call); a constant missing or of the wrong type is a ``MinerDefinitionError``
naming the file.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import os
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from ouroboros_gates.miners.corpus import JSONL, CorpusItem
from ouroboros_gates.miners.errors import MinerDefinitionError, MinerNotFoundError
from ouroboros_gates.miners.rules import Rules, check_rules
from ouroboros_gates.schemas import Fact, Scope, Severity

__all__ = [
    "CORPUS_KINDS",
    "GATES",
    "MINERS_DIR",
    "MINERS_PATH_ENV",
    "NOT_MINERS",
    "Miner",
    "discover",
    "find_miner",
    "load_miner",
    "miner_folders",
]

MINERS_DIR = Path(__file__).resolve().parent
"""This package's folder: the installed miners live in its sub-folders."""

MINERS_PATH_ENV = "OURO_MINERS_PATH"
"""Extra directories of miners (``:``-separated): each a miner folder or a directory of them."""

NOT_MINERS = frozenset({"datalog", "contract", "__pycache__"})
"""Sub-folders of the package that are not miners even if they hold an ``extract.py``."""

CORPUS_KINDS = frozenset({JSONL, "issue", "pull_request", "file_at"})
"""The corpus kinds a miner may read (only ``jsonl`` items are read by the verbs today)."""

GATES = frozenset({"deny", "warn"})
"""``deny`` blocks the pending tool call; ``warn`` is a verdict about the run, not the call."""

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_MINER_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
_PREDICATE = re.compile(r"^[a-z][A-Za-z0-9_]*$")

Extractor = Callable[[CorpusItem], Iterable[Fact]]


@dataclass(frozen=True)
class Miner:
    """A loaded miner: its declared constants, its extractor, its folder and where it was found."""

    name: str
    package: str
    verdicts: tuple[str, ...]
    scope: Scope
    corpus: tuple[str, ...]
    severity: Severity
    gate: str
    extract: Extractor
    folder: Path
    origin: str
    local: bool = False

    @property
    def rules_path(self) -> Path:
        return self.folder / "rules.dl"

    @property
    def fixtures(self) -> Path:
        return self.folder / "fixtures"

    @property
    def labels_path(self) -> Path:
        return self.fixtures / "labels.tsv"

    @property
    def fixture_glob(self) -> str:
        """The quoted-glob form of the fixture runs: ``<folder>/fixtures/*/events.jsonl``."""
        return str(self.fixtures / "*" / "events.jsonl")

    def rules(self) -> Rules:
        """The miner's rules, held to the contract (``RulesError`` otherwise)."""
        return check_rules(self.rules_path, file=shown(self.rules_path))


def shown(path: Path) -> str:
    """``path`` relative to the working directory when it lies below it, else as given."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _roots(extra: str | None) -> list[tuple[Path, str]]:
    paths = os.environ.get(MINERS_PATH_ENV, "") if extra is None else extra
    roots = [(MINERS_DIR, "installed")]
    roots += [
        (Path(part).expanduser(), f"{MINERS_PATH_ENV}:{part}") for part in paths.split(":") if part.strip()
    ]
    return roots


def miner_folders(extra: str | None = None) -> list[tuple[Path, str]]:
    """Every miner folder (``(folder, origin)``) of the package and of ``OURO_MINERS_PATH``, in
    order; ``extra`` replaces the environment's value when given."""
    found: list[tuple[Path, str]] = []
    for root, origin in _roots(extra):
        if (root / "extract.py").is_file() and root != MINERS_DIR:
            found.append((root, origin))
        elif root.is_dir():
            children = sorted(p for p in root.iterdir() if p.is_dir() and (p / "extract.py").is_file())
            found += [(child, origin) for child in children if child.name not in NOT_MINERS]
    return found


def _import(folder: Path, origin: str) -> ModuleType:
    """The folder's ``extract`` module: imported as ``miners.<name>.extract`` when installed, by file
    path under a private package name otherwise (so a miner's relative imports work either way)."""
    if origin == "installed":
        return importlib.import_module(f"ouroboros_gates.miners.{folder.name}.extract")
    digest = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:12]
    package = f"_ouro_miner_{folder.name}_{digest}"
    if package not in sys.modules:
        init = folder / "__init__.py"
        if init.is_file():
            spec = importlib.util.spec_from_file_location(
                package, init, submodule_search_locations=[str(folder)]
            )
        else:
            spec = importlib.machinery.ModuleSpec(package, None, is_package=True)
            spec.submodule_search_locations = [str(folder)]
        if spec is None:
            raise ImportError(f"no import spec for {folder}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[package] = module
        if spec.loader is not None:
            spec.loader.exec_module(module)
    return importlib.import_module(f"{package}.extract")


def _constant(module: ModuleType, where: str, name: str, check: Callable[[Any], bool], expected: str) -> Any:
    if not hasattr(module, name):
        raise MinerDefinitionError(f"{where}: no {name} (a miner declares {expected})")
    value = getattr(module, name)
    if not check(value):
        raise MinerDefinitionError(f"{where}: {name} = {value!r} is not {expected}")
    return value


def _names(value: Any, pattern: re.Pattern[str]) -> bool:
    return (
        isinstance(value, tuple)
        and bool(value)
        and all(isinstance(v, str) and pattern.match(v) for v in value)
    )


def load_miner(folder: Path, origin: str = "installed") -> Miner:
    """Load and validate the miner in ``folder``; raises ``MinerDefinitionError``."""
    where = shown(folder / "extract.py")
    if not _IDENTIFIER.match(folder.name):
        raise MinerDefinitionError(f"{shown(folder)}: a miner folder's name is a Python identifier")
    try:
        module = _import(folder, origin)
    except Exception as exc:  # a miner's own import error, whatever it is, is a definition error
        raise MinerDefinitionError(f"{where}: cannot import: {type(exc).__name__}: {exc}") from exc
    name = _constant(
        module, where, "NAME", lambda v: isinstance(v, str) and bool(_MINER_NAME.match(v)), "a name"
    )
    package = _constant(
        module,
        where,
        "PACKAGE",
        lambda v: isinstance(v, str) and v.split(".")[-1] == folder.name,
        f"the folder's import path (ending in {folder.name!r})",
    )
    verdicts = _constant(
        module, where, "VERDICTS", lambda v: _names(v, _PREDICATE), "a tuple of predicate names"
    )
    scope = _constant(module, where, "SCOPE", lambda v: v in set(Scope), "'generic' or 'tenant'")
    corpus = _constant(
        module,
        where,
        "CORPUS",
        lambda v: _names(v, _PREDICATE) and set(v) <= CORPUS_KINDS,
        f"a tuple of corpus kinds ({', '.join(sorted(CORPUS_KINDS))})",
    )
    severity = _constant(module, where, "SEVERITY", lambda v: v in set(Severity), "SEVERITY_S0 … SEVERITY_S3")
    gate = _constant(module, where, "GATE", lambda v: v in GATES, "'deny' or 'warn'")
    extract = _constant(module, where, "extract", callable, "a function extract(item) -> Iterable[Fact]")
    local = getattr(module, "LOCAL", False)
    if not isinstance(local, bool):
        raise MinerDefinitionError(f"{where}: LOCAL = {local!r} is not True or False")
    return Miner(
        name,
        package,
        verdicts,
        Scope(scope),
        corpus,
        Severity(severity),
        gate,
        extract,
        folder.resolve(),
        origin,
        local,
    )


def discover(extra: str | None = None) -> tuple[dict[str, Miner], dict[Path, MinerDefinitionError]]:
    """Every miner found, by ``NAME``, and the folders that failed to load with why. Two miners
    with one ``NAME`` are a ``MinerDefinitionError`` naming both folders."""
    miners: dict[str, Miner] = {}
    broken: dict[Path, MinerDefinitionError] = {}
    for folder, origin in miner_folders(extra):
        try:
            miner = load_miner(folder, origin)
        except MinerDefinitionError as exc:
            broken[folder] = exc
            continue
        if miner.name in miners:
            other = miners[miner.name].folder
            raise MinerDefinitionError(
                f"two miners are named {miner.name!r}: {shown(other)} and {shown(folder)}"
            )
        miners[miner.name] = miner
    return miners, broken


def find_miner(name: str, extra: str | None = None) -> Miner:
    """The miner whose ``NAME`` or folder name is ``name``; ``MinerNotFoundError`` lists the known
    ones, and a folder of that name that failed to load raises its ``MinerDefinitionError``."""
    folders = miner_folders(extra)
    for folder, origin in folders:
        if folder.name == name:
            return load_miner(folder, origin)
    miners, broken = discover(extra)
    if name in miners:
        return miners[name]
    known = ", ".join(f"{m.name} ({m.folder.name})" for m in miners.values()) or "none"
    hint = f"; {len(broken)} folder(s) failed to load: run `ouro miner list`" if broken else ""
    raise MinerNotFoundError(f"no miner named {name!r}; known: {known}{hint}")
