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
        found += [(folder, origin) for folder in _folders_of(root)]
    return found


def _folders_of(root: Path) -> list[Path]:
    """The miner folders of a root: the root itself when it is one (the package's own folder aside), else
    its children that are, sorted."""
    if (root / "extract.py").is_file() and root != MINERS_DIR:
        return [root]
    if root.is_dir():
        return _child_miners(root)
    return []


def _holds_extractor(path: Path) -> bool:
    """Whether ``path`` is a folder with an ``extract.py``."""
    return path.is_dir() and (path / "extract.py").is_file()


def _child_miners(root: Path) -> list[Path]:
    """The folders below ``root`` that hold an ``extract.py``, sorted, but those that are no miners."""
    children = sorted(p for p in root.iterdir() if _holds_extractor(p))
    return [child for child in children if child.name not in NOT_MINERS]


def _import(folder: Path, origin: str) -> ModuleType:
    """The folder's ``extract`` module: imported as ``miners.<name>.extract`` when installed, by file
    path under a private package name otherwise (so a miner's relative imports work either way)."""
    if origin == "installed":
        return importlib.import_module(f"ouroboros_gates.miners.{folder.name}.extract")
    digest = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:12]
    package = f"_ouro_miner_{folder.name}_{digest}"
    if package not in sys.modules:
        _import_package(folder, package)
    return importlib.import_module(f"{package}.extract")


def _import_package(folder: Path, package: str) -> None:
    """Import ``folder`` as the package ``package``: from its ``__init__.py``, or as a namespace without."""
    spec = _package_spec(folder, package)
    module = importlib.util.module_from_spec(spec)
    sys.modules[package] = module
    if spec.loader is not None:
        spec.loader.exec_module(module)


def _package_spec(folder: Path, package: str) -> importlib.machinery.ModuleSpec:
    init = folder / "__init__.py"
    if init.is_file():
        spec = importlib.util.spec_from_file_location(package, init, submodule_search_locations=[str(folder)])
    else:
        spec = importlib.machinery.ModuleSpec(package, None, is_package=True)
        spec.submodule_search_locations = [str(folder)]
    if spec is None:
        raise ImportError(f"no import spec for {folder}")
    return spec


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


def _is_miner_name(value: Any) -> bool:
    return isinstance(value, str) and bool(_MINER_NAME.match(value))


def _is_import_path_of(value: Any, folder: Path) -> bool:
    """Whether ``value`` is an import path ending in the folder's name."""
    return isinstance(value, str) and value.split(".")[-1] == folder.name


def _is_corpus(value: Any) -> bool:
    """Whether ``value`` is a tuple of corpus kinds."""
    return _names(value, _PREDICATE) and set(value) <= CORPUS_KINDS


def _miner_module(folder: Path, origin: str, where: str) -> ModuleType:
    """The folder's ``extract`` module; ``MinerDefinitionError`` when the folder's name is no identifier or
    the module does not import."""
    if not _IDENTIFIER.match(folder.name):
        raise MinerDefinitionError(f"{shown(folder)}: a miner folder's name is a Python identifier")
    try:
        return _import(folder, origin)
    except Exception as exc:  # a miner's own import error, whatever it is, is a definition error
        raise MinerDefinitionError(f"{where}: cannot import: {type(exc).__name__}: {exc}") from exc


def _local(module: ModuleType, where: str) -> bool:
    """The miner's ``LOCAL`` flag (False when it has none)."""
    local = getattr(module, "LOCAL", False)
    if not isinstance(local, bool):
        raise MinerDefinitionError(f"{where}: LOCAL = {local!r} is not True or False")
    return local


def load_miner(folder: Path, origin: str = "installed") -> Miner:
    """Load and validate the miner in ``folder``; raises ``MinerDefinitionError``."""
    where = shown(folder / "extract.py")
    module = _miner_module(folder, origin, where)
    name = _constant(module, where, "NAME", _is_miner_name, "a name")
    package = _constant(
        module,
        where,
        "PACKAGE",
        lambda v: _is_import_path_of(v, folder),
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
        _is_corpus,
        f"a tuple of corpus kinds ({', '.join(sorted(CORPUS_KINDS))})",
    )
    severity = _constant(module, where, "SEVERITY", lambda v: v in set(Severity), "SEVERITY_S0 … SEVERITY_S3")
    gate = _constant(module, where, "GATE", lambda v: v in GATES, "'deny' or 'warn'")
    extract = _constant(module, where, "extract", callable, "a function extract(item) -> Iterable[Fact]")
    local = _local(module, where)
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
    raise _not_found(name, miners, broken)


def _not_found(
    name: str, miners: dict[str, Miner], broken: dict[Path, MinerDefinitionError]
) -> MinerNotFoundError:
    """The error for a name no miner has: the known miners, and how many folders failed to load."""
    known = ", ".join(f"{m.name} ({m.folder.name})" for m in miners.values()) or "none"
    hint = f"; {len(broken)} folder(s) failed to load: run `ouro miner list`" if broken else ""
    return MinerNotFoundError(f"no miner named {name!r}; known: {known}{hint}")
