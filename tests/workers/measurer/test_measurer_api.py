"""The measurer's public surface is pinned, and its core imports neither Celery nor SQLAlchemy."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ouroboros_gates.workers import measurer

CORE = ("series", "stats", "inputs", "hfleet", "snapshot")
FORBIDDEN = (
    "celery",
    "kombu",
    "sqlalchemy",
    "events",
    "ouroboros_gates.workers.shell",
    "ouroboros_gates.workers.app",
)
PUBLIC = [
    "EVENT_TYPES",
    "FLOOR",
    "SERIES",
    "SNAPSHOT",
    "ZONE",
    "Fit",
    "HFleet",
    "MeasureInput",
    "RunCounts",
    "RunRatio",
    "SessionCost",
    "Structure",
    "build_snapshot",
    "fold",
    "logged",
    "measure",
    "measure_log",
    "offenders",
    "ols",
    "period_of",
    "period_start",
    "read_h_fleet",
    "read_h_fleet_runs",
    "read_input",
    "run_name",
    "series_stream",
    "snapshot_path",
    "t_975",
    "write_snapshot",
]


def _isort_key(name: str) -> tuple[int, str]:
    # The order ruff's RUF022 keeps: SCREAMING_CASE, then CamelCase, then the rest.
    return (0 if name.isupper() else 1 if name[0].isupper() else 2), name


def test_public_surface_is_pinned_sorted_and_resolves() -> None:
    assert measurer.__all__ == PUBLIC
    assert measurer.__all__ == sorted(measurer.__all__, key=_isort_key)
    for name in measurer.__all__:
        assert hasattr(measurer, name), name


@pytest.mark.parametrize("module", CORE)
def test_core_imports_no_celery_and_no_sqlalchemy(module: str) -> None:
    tree = ast.parse((Path(measurer.__file__).parent / f"{module}.py").read_text())
    imported = [
        name
        for node in ast.walk(tree)
        for name in (
            [alias.name for alias in node.names]
            if isinstance(node, ast.Import)
            else [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else []
        )
    ]
    assert not [
        name
        for name in imported
        if name.removeprefix("ouroboros_gates.").split(".")[0] in FORBIDDEN or name in FORBIDDEN
    ]
