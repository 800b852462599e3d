"""Hand-made candidates, records and memories for the decider's engine tests, and the git environment of
the tests that build repositories."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ouroboros_gates.decider.memory import Memory, MemoryExample
from ouroboros_gates.decider.retrieve import Column
from ouroboros_gates.schemas import Candidate, Example, FeatureRecord, InstrumentState, State

GIT_ENV = {
    **os.environ,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "A",
    "GIT_AUTHOR_EMAIL": "a@example.invalid",
    "GIT_COMMITTER_NAME": "A",
    "GIT_COMMITTER_EMAIL": "a@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+00:00",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+00:00",
}
"""git with no user or system configuration and fixed identities and dates, for the tests' repositories."""


RAN = InstrumentState(state=State.RAN, version="v1")
COLUMNS = (
    Column("qr.enabled_hits", "qr", 20.0),
    Column("bandit.issues", "bandit", 10.0),
    Column("lang.python", "lang"),
)


@dataclass(frozen=True)
class Sig:
    """A signal as the engine reads it."""

    instrument: str
    rule: str
    line: int
    family: str = "sql_injection"
    message: str = "a signal"


@dataclass(frozen=True)
class Item:
    """An analysed candidate as the engine reads it."""

    candidate: Candidate
    language: str
    record: FeatureRecord
    signals: tuple[Sig, ...]
    code: str
    start_line: int
    end_line: int
    changed_lines: tuple[int, ...] = ()
    roles: tuple[str, ...] = field(default=())
    flows: tuple[Any, ...] = ()
    priors: tuple[str, ...] = ()


def item(
    function: str = "search", hits: int = 1, family: str = "sql_injection", repo: str = "acme/shop"
) -> Item:
    candidate = Candidate(repo=repo, pin="b" * 40, path="app/db.py", function=function, family=family)
    record = FeatureRecord(
        candidate=candidate,
        language="python",
        x={"qr.enabled_hits": hits, "bandit.issues": hits, "lang.python": True},
        instruments={"qr": RAN, "bandit": RAN, "lang": RAN},
        feature_set_digest="d" * 64,
    )
    code = f'def {function}(q):\n    sql = f"SELECT * FROM t WHERE a = {{q}}"\n    return db.execute(sql)'
    return Item(
        candidate, "python", record, (Sig("qr", "py-sql-fstring", 11),), code, 10, 12, (), ("sink sql 12",)
    )


def memory(n: int = 8, family: str = "sql_injection") -> Memory:
    """Examples alternating vulnerable (hits 1) and not (hits 0), one group each."""
    out = []
    for i in range(n):
        y = 1 if i % 2 == 0 else 0
        e = Example(
            excerpt_sha=f"{i:064x}",
            x={"qr.enabled_hits": y, "bandit.issues": y, "lang.python": True},
            instruments={"qr": RAN, "bandit": RAN, "lang": RAN},
            y=y,
            group=f"corpus/repo{i}",  # type: ignore[arg-type]
            language="python",
            family=family,
        )
        out.append(
            MemoryExample(
                example=e, excerpt=f"   1  def f{i}(x):\n   2      return run(x, {i})", source="pairs"
            )
        )
    return Memory(out)
