"""The side tables: state kept in the event log's database that no event records, so no replay rebuilds it.

Each table has one owner, which reads and writes it through this handle (never through an engine):

- ``ouro_fixer_budget_days`` and ``ouro_fixer_reservations`` (``events.budget``): the fixers' daily cap,
  reserved before a launch and settled after it. A reservation must be atomic across workers, before the
  session exists to record anything: a row lock, not a fold.
- ``ouro_memory_*`` (``events.memory_tables``, owned by ``decider.memory.MemoryStore``): the decider's
  examples, excerpt blobs, cached embeddings and compiled programs. They are built from corpora and
  learning runs outside the log (``ouro learn``), and an embedding is a cache of a model's output.
- ``ouro_trigger_locks`` (``events.tables``, owned by ``workers.triggers``): one lock row per cron trigger,
  so a beat occurrence is published once while the previous one still runs. A lock is about now.

A store hands out its handle (``EventStore.side_tables``); ``ouro replay --rebuild`` leaves these tables
as they are. The in-memory store keeps its own in an in-memory SQLite database.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, Engine, inspect

__all__ = ["SideTables"]


class SideTables:
    """The handle on the side tables beside the log: transactions on the database that holds them."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    @property
    def dialect(self) -> str:
        """The database's dialect name (``sqlite``, ``postgresql``): for an owner's upsert."""
        return self._engine.dialect.name

    def has_table(self, name: str) -> bool:
        """Whether the database holds the table ``name`` (a database older than its migration does not)."""
        return inspect(self._engine).has_table(name)

    def close(self) -> None:
        """Close the pooled connections (a later transaction opens new ones)."""
        self._engine.dispose()

    @contextmanager
    def reading(self) -> Iterator[Connection]:
        """A connection for reads (each statement sees what is committed)."""
        with self._engine.connect() as conn:
            yield conn

    @contextmanager
    def writing(self) -> Iterator[Connection]:
        """A write transaction, committed on leaving; on SQLite it begins IMMEDIATE, so writers queue."""
        with self._engine.connect() as raw:
            conn = raw.execution_options(ouro_write=True)  # read by the log's engine on SQLite
            with conn.begin():
                yield conn
