"""A fresh PostgreSQL database for one benchmark run, dropped on the way out."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
from sqlalchemy.engine import make_url

__all__ = ["fresh_pg_database"]


@contextmanager
def fresh_pg_database(url: str, tag: str) -> Iterator[str]:
    """A database ``ouro_bench_<tag>_<pid>`` on the server at ``url`` (its URL), dropped afterwards."""
    parsed = make_url(url)
    name = f"ouro_bench_{tag}_{os.getpid()}"
    admin = parsed.set(drivername="postgresql", database="postgres").render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True, connect_timeout=3) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield parsed.set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
