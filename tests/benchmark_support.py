"""A script of ``benchmarks/`` loaded as a module in this process, as the benchmark tests run them."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@contextmanager
def benchmark(name: str) -> Iterator[ModuleType]:
    """``benchmarks/<name>.py`` as a module, registered in ``sys.modules`` while the block runs (its
    dataclasses look their module up there) and taken out after; its folder is on ``sys.path``, as when it
    runs as a script (its shared ``_modules`` import that way)."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.append(str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(f"benchmarks_{name.lstrip('_')}", BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[spec.name]


def load_benchmark(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` as a module, for what it defines (its programs, its generators)."""
    with benchmark(name) as module:
        return module


def run_benchmark(name: str, argv: list[str]) -> None:
    """Run ``benchmarks/<name>.py``'s ``main`` with ``argv`` (what it prints goes to the test's capture)."""
    with benchmark(name) as module:
        module.main(argv)
