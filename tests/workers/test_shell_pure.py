"""The task shell's pure cores: a redelivered message is found by the append's own handled check (in its
transaction), its core runs again and appends nothing; a failure of a message handled already is a
duplicate, not a dead letter. A core that is not pure is checked first and does not run again."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ouroboros_gates.events import DEAD_LETTER, SqlEventStore, ensure_schema
from ouroboros_gates.schemas import Probe, ProbeCompleted
from ouroboros_gates.schemas.errors import PermanentError
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers import shell


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqlEventStore]:
    sql = SqlEventStore.from_url(f"sqlite:///{tmp_path / 'shell.sqlite'}")
    ensure_schema(sql.engine)
    shell._contexts[os.getpid()] = shell.Context(Settings(state=tmp_path / "state"), sql, "test")
    yield sql
    shell.reset_context()
    sql.close()


class Core:
    """A core that counts its calls, and fails with a permanent error once ``broken`` is set."""

    def __init__(self) -> None:
        self.calls, self.broken = 0, False

    def __call__(self, message: Probe, ctx: shell.Context) -> shell.Outcome:
        self.calls += 1
        if self.broken:
            raise PermanentError(f"{message.probe}: gone")
        event = ProbeCompleted(probe=message.probe, hostname="t", held_s=0.0)
        return shell.Outcome.single(f"probe/{message.probe}", event)


def _deliver(core: Core, payload: dict[str, Any], pure: bool) -> str:
    task = SimpleNamespace(request=SimpleNamespace(retries=0))
    return shell.run_message(task, Probe, core, payload, pure=pure)


@pytest.mark.parametrize("pure", [True, False])
def test_a_redelivered_message_appends_once(store: SqlEventStore, pure: bool) -> None:
    core, payload = Core(), Probe(message_id="pure-000001", probe="p").to_json_dict()
    assert _deliver(core, payload, pure) == "appended"
    assert _deliver(core, payload, pure) == "duplicate"
    assert len(store.read_stream("probe/p")) == 1
    assert core.calls == (2 if pure else 1)  # a pure core runs again; the append finds the duplicate


def test_a_pure_core_failing_on_a_message_handled_already_is_a_duplicate_not_a_dead_letter(
    store: SqlEventStore,
) -> None:
    core, payload = Core(), Probe(message_id="pure-000002", probe="q").to_json_dict()
    assert _deliver(core, payload, True) == "appended"
    core.broken = True  # what it read is gone since
    assert _deliver(core, payload, True) == "duplicate"
    assert not store.is_handled(DEAD_LETTER, "pure-000002")
    other = Probe(message_id="pure-000003", probe="r").to_json_dict()  # never handled: still dead-lettered
    assert _deliver(core, other, True) == "dead-lettered"
    assert store.is_handled(DEAD_LETTER, "pure-000003")


def test_a_context_keeps_one_of_each_kind_for_its_process(store: SqlEventStore) -> None:
    ctx = shell.context()
    made: list[int] = []

    def counter() -> list[int]:
        made.append(1)
        return made

    assert ctx.keep(counter) is ctx.keep(counter) is made and made == [1]  # made once, then kept
    assert ctx.keep(dict) is ctx.keep(dict) and set(ctx.kept) == {counter, dict}  # one per kind
    assert shell.Context(ctx.settings, store, "other").kept == {}  # another process keeps its own
