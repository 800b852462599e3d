"""The chaos suite's marker (``pytest -m chaos`` runs it alone) and the path to the fleet test support
(``_fleet``)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# ``_fleet`` (real ``celery worker`` processes) lives beside the fleet's integration tests, ``fleet_support``
# (``ouro`` processes) beside the ops tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workers"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ops"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "chaos: replays messages through the real fleet while workers, Redis and PostgreSQL fail"
    )
