"""Fixtures of the corpus reader tests: our own small captures, and the shared real ones (read in place)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def fixtures() -> Path:
    """Our fixtures, written by hand in the exact shapes of each real format."""
    return FIXTURES


Jq = Callable[..., list[Any]]


def _run_jq(program: str, *files: Path, slurp: bool = False) -> list[Any]:
    argv = ["jq", "-c", *(["-s"] if slurp else []), program, *map(str, files)]
    out = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=60).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


@pytest.fixture
def jq() -> Jq:
    """``jq(program, *files, slurp=False)``: the independent counts the reader is checked against."""
    if shutil.which("jq") is None:
        pytest.skip("jq is not installed; the real-capture counts are checked against jq")
    return _run_jq
