"""The house plan: imports run down the floors, no file imports itself back through others, git is run by
one module, and a package loads only what its floor allows."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NAMESPACE = "ouroboros_gates"
FLOORS = {
    "schemas": 0,
    "harness": 1,
    "forge": 1,
    "llm": 1,
    "events": 2,
    "miners": 2,
    "decider": 3,
    "workers": 4,
    "ops": 5,
}
"""The house's floors (DESIGN.md, README): a package imports only from floors below its own, and from
itself."""
PACKAGES = ("schemas", "harness", "forge", "llm", "events", "miners", "decider", "workers", "ops")


def _module_name(path: Path) -> str:
    parts = (NAMESPACE, *path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources() -> dict[str, Path]:
    return {_module_name(p): p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))}


def _imports(path: Path, name: str, known: set[str]) -> set[str]:
    """The project modules a file imports, at any depth of its code (function-level imports count)."""
    found: set[str] = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(
                    [*package.split(".")[: len(package.split(".")) - node.level + 1], base]
                ).strip(".")
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        for written in targets:
            target = written
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def test_no_file_imports_itself_back_through_others() -> None:
    sources = _sources()
    known = set(sources)
    graph = {name: _imports(path, name, known) for name, path in sources.items()}
    index, low, on_stack, stack, circles = {}, {}, set(), [], []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                item = stack.pop()
                on_stack.discard(item)
                component.append(item)
                if item == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for name in graph:
        if name not in index:
            visit(name)
    assert circles == []


def test_imports_run_down_the_floors() -> None:
    sources = _sources()
    known = set(sources)
    upward = []
    for name, path in sources.items():
        floor = name.split(".")[1]
        for target in _imports(path, name, known):
            other = target.split(".")[1]
            if other != floor and FLOORS[other] >= FLOORS[floor]:
                upward.append(f"{name} -> {target}")
    assert upward == [], "a package imports only from floors below its own"


def test_git_is_started_by_one_module() -> None:
    offenders = []
    for name, path in _sources().items():
        if name == "ouroboros_gates.forge.git":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value == "git":
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == [], "git is run only through forge.git"


def _loaded(code: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint('\\n'.join(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return {line.removeprefix("ouroboros_gates.").split(".")[0] for line in done.stdout.splitlines()}


@pytest.mark.parametrize("package", ["miners", "miners.datalog", "harness", "forge", "llm", "decider"])
def test_lower_floors_load_no_event_log_or_fleet(package: str) -> None:
    loaded = _loaded(f"import {NAMESPACE}.{package}")
    assert (
        loaded.isdisjoint({"sqlalchemy", "celery", "kombu", "events", "workers", "ops"})
        or package == "decider"
    )
    if package == "decider":  # the decider keeps its memory in the event log's database, never the fleet
        assert loaded.isdisjoint({"celery", "kombu", "workers", "ops"})


def test_processes_are_forked_by_one_module() -> None:
    offenders = []
    for name, path in _sources().items():
        if name == "ouroboros_gates.schemas._child":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in {"fork", "pipe"}
                and getattr(node.value, "id", "") == "os"
            ):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == [], "a child's answer comes back through schemas._child (fork_child)"


def _checked_names(path: Path) -> dict[str, str]:
    """``name -> module`` of a package ``__init__``'s ``if TYPE_CHECKING:`` imports."""
    found: dict[str, str] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for item in node.body:
                if isinstance(item, ast.ImportFrom) and item.module and item.module.startswith(NAMESPACE):
                    found.update({alias.asname or alias.name: item.module for alias in item.names})
    return found


def test_one_lazy_import_mechanism_whose_homes_mypy_reads_too() -> None:
    users = {name: path for name, path in _sources().items() if "__getattr__ = lazy(" in path.read_text()}
    assert len(users) >= 5
    for name, path in _sources().items():
        assert name in users or "def __getattr__" not in path.read_text(), (
            f"{name}: use ouroboros_gates._lazy"
        )
    for name, path in users.items():
        package = importlib.import_module(name)
        assert _checked_names(path) == package._HOMES, name
        assert set(package._HOMES) <= set(package.__all__), name
