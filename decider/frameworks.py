"""Which frameworks and libraries a file uses, from what it imports and what its repository declares.

``ruleset/frameworks.toml`` lists each id with its languages, the modules or packages a file imports to use
it, markers for code that uses it without an import, and its names in dependency manifests. ``--priors
detected`` (the default of ``ouro scan``, ``ouro pre-push`` and ``ouro learn evaluate``) switches on, per
file, the priors of the ids that file imports, and of the ids a manifest above it declares when the id is
marked
``manifest = true`` (Express's ``req``/``res`` reach a route file as parameters, without an import). A Python
or Java file must import what it uses, so there the file's own imports decide: a file that does not import
``flask`` gets no Flask source. The detection is text over the file's lines, done once when it is parsed.
"""

from __future__ import annotations

import fnmatch
import json
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import PurePosixPath
from typing import Literal

from ouroboros_gates.decider.instruments.base import RULESET
from ouroboros_gates.decider.instruments.rules import Priors as Resolved

__all__ = [
    "MANIFESTS",
    "Framework",
    "Priors",
    "Resolved",
    "declared",
    "frameworks",
    "imported",
    "is_manifest",
    "resolve",
]

Priors = Literal["off", "all", "detected"] | frozenset[str]
"""Which framework/library priors are on: none, all, what each file uses (``detected``), or the named ids."""

MANIFESTS = (
    "requirements*.txt",
    "requirements/*.txt",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "Pipfile",
    "package.json",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "composer.json",
)
"""Dependency manifests read for declared frameworks (by the end of their path)."""


@dataclass(frozen=True)
class Framework:
    """One framework or library id: where it applies and how a file or a repository shows it is used."""

    id: str
    languages: frozenset[str]
    imports: tuple[str, ...]
    markers: tuple[re.Pattern[str], ...]
    packages: frozenset[str]
    manifest: bool


@cache
def frameworks() -> tuple[Framework, ...]:
    """Every id of ``ruleset/frameworks.toml``."""
    raw = tomllib.loads((RULESET / "frameworks.toml").read_text(encoding="utf-8"))
    return tuple(_framework(entry) for kind in ("framework", "library") for entry in raw.get(kind, []))


def _framework(entry: dict[str, object]) -> Framework:
    def strings(key: str) -> list[str]:
        value = entry.get(key, [])
        return [str(v) for v in value] if isinstance(value, list) else []

    return Framework(
        id=str(entry["id"]),
        languages=frozenset(strings("languages")),
        imports=tuple(strings("imports")),
        markers=tuple(re.compile(m, re.MULTILINE) for m in strings("markers")),
        packages=frozenset(p.lower() for p in strings("packages")),
        manifest=bool(entry.get("manifest")),
    )


_PY_IMPORT = re.compile(
    r"^\s*import\s+([\w.]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*)", re.MULTILINE
)
_PY_FROM = re.compile(r"^\s*from\s+([\w.]+)\s+import\b", re.MULTILINE)
_JAVA_IMPORT = re.compile(r"^\s*import\s+(?:static\s+)?([\w.*]+)\s*;", re.MULTILINE)
_JS_IMPORT = re.compile(
    r"""(?:\brequire\s*\(\s*|\bfrom\s+|^\s*import\s+|\bimport\s*\(\s*)['"]([^'"]+)['"]""", re.MULTILINE
)
_PHP_USE = re.compile(r"^\s*use\s+\\?([\w\\]+)", re.MULTILINE)


def _modules(language: str, text: str) -> list[str]:
    """The module names a file imports, as its language writes them."""
    read = _MODULE_READERS.get(language)
    return read(text) if read is not None else []


def _python_modules(text: str) -> list[str]:
    found = [name.split()[0] for group in _PY_IMPORT.findall(text) for name in group.split(",")]
    return [m.strip().split(".")[0] for m in found + _PY_FROM.findall(text) if m and not m.startswith(".")]


def _java_modules(text: str) -> list[str]:
    return _JAVA_IMPORT.findall(text)


def _script_modules(text: str) -> list[str]:
    return [_package(spec) for spec in _JS_IMPORT.findall(text) if not spec.startswith(".")]


def _php_modules(text: str) -> list[str]:
    return [name.replace("\\", ".") for name in _PHP_USE.findall(text)]


_MODULE_READERS: dict[str, Callable[[str], list[str]]] = {
    "java": _java_modules,
    "javascript": _script_modules,
    "php": _php_modules,
    "python": _python_modules,
    "typescript": _script_modules,
}
"""How each language's imports name modules."""


def _package(spec: str) -> str:
    """``@scope/name/sub`` -> ``@scope/name``; ``name/sub`` -> ``name``; ``node:fs`` stays."""
    parts = spec.split("/")
    return "/".join(parts[:2]) if spec.startswith("@") else parts[0]


def imported(language: str, lines: Iterable[str]) -> frozenset[str]:
    """The framework and library ids a file of ``language`` imports (or, for a marker, plainly uses)."""
    text = "\n".join(lines)
    modules = _modules(language, text)
    found = set()
    for entry in frameworks():
        if language in entry.languages and _uses(entry, modules, text):
            found.add(entry.id)
    return frozenset(found)


def _uses(entry: Framework, modules: Sequence[str], text: str) -> bool:
    """Whether a file imports one of the entry's modules or, for a marker, plainly uses it."""
    return any(fnmatch.fnmatchcase(m, glob) for m in modules for glob in entry.imports) or any(
        marker.search(text) for marker in entry.markers
    )


def is_manifest(path: str) -> bool:
    """Whether ``path`` is a dependency manifest ``declared`` reads."""
    pure = PurePosixPath(path)
    return any(pure.match(glob) for glob in MANIFESTS)


_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)", re.MULTILINE)
_QUOTED = re.compile(r"""["']([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?:[<>=!~;@ ][^"']*)?["']""")
_MAVEN = re.compile(r"<groupId>\s*([\w.-]+)\s*</groupId>")
_GRADLE = re.compile(r"""["']([\w.-]+):[\w.-]+""")


def _names(path: str, text: str) -> set[str]:
    """The dependency names a manifest declares (lower-cased)."""
    name = PurePosixPath(path).name
    read = _READERS_BY_NAME.get(name)
    if read is not None:
        return read(text)
    if name.startswith("build.gradle"):
        return _gradle_names(text)
    if name.endswith(".txt"):
        return _requirement_names(text)
    return _quoted_names(text)


def _maven_names(text: str) -> set[str]:
    """A Maven POM's group ids."""
    return {g.lower() for g in _MAVEN.findall(text)}


def _gradle_names(text: str) -> set[str]:
    """A Gradle build's dependency groups (``"group:name"``)."""
    return {g.lower() for g in _GRADLE.findall(text)}


def _quoted_names(text: str) -> set[str]:
    """The quoted requirement names of a Python project's manifest (pyproject.toml, setup.py, Pipfile)."""
    return {m.lower() for m in _QUOTED.findall(text)}


def _json_names(text: str) -> set[str]:
    """npm's and Composer's dependency sections (a manifest that is not JSON declares nothing)."""
    try:
        data = json.loads(text)
    except ValueError:
        return set()
    return {str(n).lower() for section in _sections(data) if isinstance(section, dict) for n in section}


def _sections(data: object) -> list[object]:
    """The dependency sections of npm's and Composer's JSON (none when it is not an object)."""
    keys = ("dependencies", "devDependencies", "peerDependencies", "require", "require-dev")
    return [data.get(k) for k in keys] if isinstance(data, dict) else []


_READERS_BY_NAME: dict[str, Callable[[str], set[str]]] = {
    "package.json": _json_names,
    "composer.json": _json_names,
    "pom.xml": _maven_names,
}
"""The manifests read by their exact file name."""


def _requirement_names(text: str) -> set[str]:
    """A requirements file's names (comments and options left out)."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith(("#", "-"))]
    return {m.lower() for m in _REQUIREMENT.findall("\n".join(lines))}


def declared(manifests: Mapping[str, str]) -> dict[str, frozenset[str]]:
    """Per folder of a manifest (``""`` the root): the ids its manifests declare."""
    by_folder: dict[str, set[str]] = {}
    for path, text in manifests.items():
        ids = _declaring(_names(path, text))
        folder = PurePosixPath(path).parent.as_posix()
        by_folder.setdefault("" if folder == "." else folder, set()).update(ids)
    return {folder: frozenset(ids) for folder, ids in by_folder.items()}


def _declaring(names: set[str]) -> set[str]:
    """The ids of the frameworks and libraries one of whose packages is among the names."""
    return {e.id for e in frameworks() if e.packages & names}


def resolve(
    priors: Priors,
    language: str,
    path: str,
    uses: frozenset[str],
    manifests: Mapping[str, frozenset[str]] | None = None,
) -> Resolved:
    """The priors one file gets: ``detected`` becomes the ids it imports, plus the ``manifest`` ids a manifest
    in its folder or above declares for its language; other settings are as given."""
    if priors != "detected":
        return priors
    found = set(uses)
    if manifests:
        found |= _manifest_ids(language, path, manifests)
    return frozenset(found)


def _manifest_ids(language: str, path: str, manifests: Mapping[str, frozenset[str]]) -> set[str]:
    """The ``manifest`` ids for the language that a manifest in the file's folder or above declares."""
    by_id = {e.id: e for e in frameworks()}
    found = set()
    for folder in _folders_above(path):
        for framework_id in manifests.get(folder, frozenset()):
            entry = by_id[framework_id]
            if entry.manifest and language in entry.languages:
                found.add(framework_id)
    return found


def _folders_above(path: str) -> list[str]:
    """The root (``""``), then each folder down to the file's own."""
    return ["", *(p.as_posix() for p in reversed(PurePosixPath(path).parents[:-1]))]
