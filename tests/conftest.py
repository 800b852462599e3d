"""Shared fixtures: real PostgreSQL and Redis on 127.0.0.1, each test run in its own database.

Where the services are not running the tests that need them are skipped with the reason, except under
CI (``CI=true``), where ``.ci/run`` has started them and a missing service is a failure.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
import redis

PG_ADMIN = os.environ.get("OURO_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
REDIS_HOST = os.environ.get("OURO_TEST_REDIS", "redis://127.0.0.1:6379")

# The runner's terminal must not shape what a test reads: pytest-xdist's workers set COLUMNS, and a console
# made while it is set (a CLI module's, at import) keeps that width whatever a test's own environment says
# later.
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)


# With no OURO_STATE the state lives in the user's state directory (``schemas.statedir``): a test run keeps
# its own, never the developer's (subprocesses inherit it).
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="ouro-test-xdg-state-")


def _unavailable(what: str, exc: Exception) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{what} is required under CI and is not reachable: {exc}")
    pytest.skip(f"{what} not reachable on 127.0.0.1 ({exc}); run .ci/run to start it")


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """A fresh PostgreSQL database for this test session; its SQLAlchemy URL."""
    name = f"ouro_test_{uuid.uuid4().hex[:10]}"
    try:
        with psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=3) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
    except psycopg.Error as exc:
        _unavailable("PostgreSQL", exc)
    base = PG_ADMIN.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://")
    yield f"{base}/{name}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def pg_url(pg_server: str) -> Iterator[str]:
    """The session's PostgreSQL database, emptied for each test."""
    from ouroboros_gates.events import make_engine

    engine = make_engine(pg_server)
    with engine.begin() as conn:  # every table, the ledger's and any a test made for itself
        conn.exec_driver_sql("DROP SCHEMA public CASCADE")
        conn.exec_driver_sql("CREATE SCHEMA public")
    engine.dispose()
    yield pg_server


@pytest.fixture(scope="session")
def redis_server() -> str:
    """Redis reachable, or skip."""
    try:
        redis.Redis.from_url(REDIS_HOST, socket_connect_timeout=3).ping()
    except redis.RedisError as exc:
        _unavailable("Redis", exc)
    return REDIS_HOST


@pytest.fixture
def redis_url(redis_server: str) -> Iterator[str]:
    """A Redis database number of its own (one per pytest-xdist worker), flushed before and after."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")  # gw0, gw1, … (--maxprocesses keeps them under 14)
    number = 1 + (int(worker[2:]) if worker else os.getpid()) % 14
    url = f"{redis_server}/{number}"
    client = redis.Redis.from_url(url)
    client.flushdb()
    yield url
    client.flushdb()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    """A SQLite event log in the test's temporary directory."""
    return f"sqlite:///{tmp_path / 'events.sqlite'}"


@pytest.fixture
def shared_corpora() -> Path:
    """The shared real-data folder beside the checkout, or skip."""
    path = Path(__file__).resolve().parents[2] / "shared" / "corpora"
    if not path.is_dir():
        pytest.skip("../shared/corpora is absent (only development machines have it)")
    return path


@pytest.fixture
def agent_logs(shared_corpora: Path) -> Path:
    """The real agents' logs in ../shared/corpora/agent_logs, read in place (skips where the folder is
    absent)."""
    path = shared_corpora / "agent_logs"
    if not path.is_dir():
        pytest.skip("../shared/corpora/agent_logs is absent")
    return path


@pytest.fixture
def model_server() -> Iterator[Any]:
    """A scripted chat and embedding server on 127.0.0.1 (tests/fake_model_server.py), stopped afterwards."""
    from fake_model_server import FakeModelServer

    with FakeModelServer() as server:
        yield server
