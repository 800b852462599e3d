"""The main job's first and last steps: ingest the runs and mine them, then measure, through the queue."""

from __future__ import annotations

from datetime import UTC

from rich.console import Console
from rich.progress import Progress
from sqlalchemy import func, select

from ouroboros_gates.events import EventStore, LedgerStore
from ouroboros_gates.events import tables as t
from ouroboros_gates.ops.embedded import SharedFleet
from ouroboros_gates.ops.loop.queue import Handled, tasks, through_queue
from ouroboros_gates.schemas import IngestRun, Measure, Message, MineRun, RunRecorded, content_id
from ouroboros_gates.schemas.settings import Settings
from ouroboros_gates.workers.miner.ingest import mine_message

__all__ = ["ingest_step", "measure_step"]


def ingest_step(
    store: LedgerStore, settings: Settings, messages: list[IngestRun], shared: SharedFleet
) -> Handled:
    """Ingest the runs not recorded yet, then wait for each run's mine: the one its recorded content asks for
    (a run still being written may have grown since its message was made), published here for a run recorded
    by an earlier run of the loop, by the ingest's outbox otherwise."""
    ingests = _not_ingested(store, messages)
    earlier = _unmined(store, [m for m in messages if m not in ingests])
    if not ingests and not earlier:
        return Handled(before=tuple(m.message_id for m in messages))
    with Progress(console=Console(stderr=True), transient=True) as progress:
        bar = progress.add_task(
            "ingesting and mining runs through the queue", total=2 * len(ingests) + len(earlier)
        )

        def advance(n: int) -> None:
            progress.advance(bar, n)

        sent = through_queue(store, settings, None, shared, publish=[*ingests, *earlier], on_progress=advance)
        mines = tasks(_unmined(store, ingests))
        return sent + through_queue(store, settings, None, shared, waiting=mines, on_progress=advance)


def _not_ingested(store: EventStore, messages: list[IngestRun]) -> list[IngestRun]:
    """The ingests no worker has handled yet, in order."""
    return [m for m in messages if not store.is_handled(m.TASK, m.message_id)]


def _unmined(store: EventStore, recorded: list[IngestRun]) -> list[Message]:
    """The mines not handled yet of the runs these messages recorded."""
    return [
        mine for mine in _recorded_mines(store, recorded) if not store.is_handled(mine.TASK, mine.message_id)
    ]


def _recorded_mines(store: EventStore, recorded: list[IngestRun]) -> list[MineRun]:
    """The mines the recorded ingests asked for (an ingest not recorded yet asks for none)."""
    return [mine for m in recorded if (mine := _recorded_mine(store, m)) is not None]


def _recorded_mine(store: EventStore, message: IngestRun) -> MineRun | None:
    """The mine a recorded ingest asked for (its id follows the content the worker read), or None."""
    for event in reversed(store.read_stream(f"run/{message.run}")):
        if event.type == RunRecorded.TYPE and event.meta.get("message_id") == message.message_id:
            recorded = event.decode_as(RunRecorded)
            return mine_message(message, recorded.digest, recorded.path)
    return None


def measure_step(store: LedgerStore, settings: Settings, shared: SharedFleet | None = None) -> Handled:
    """Measure as of the last event the loop recorded (not the wall clock, and not the measurements
    themselves: a second run over the same corpus measures the same instant and prints the same)."""
    with store.reading() as conn:
        last = conn.execute(
            select(func.max(t.events.c.recorded_at)).where(t.events.c.type != "SeriesPointRecorded")
        ).scalar_one_or_none()
    if last is None:
        return Handled()
    at = last if last.tzinfo else last.replace(tzinfo=UTC)
    message = Measure(message_id=content_id("measure", at.isoformat()), at=at, tenant=settings.tenant)
    return through_queue(store, settings, ["measurer"], shared, publish=[message])
