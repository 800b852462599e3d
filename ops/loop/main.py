"""The main job: run the loop once on the embedded default over a corpus, and print what it found.

Every number printed is read back from the event log's projections, so a second run prints the same.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from ouroboros_gates.events import LedgerStore, open_store
from ouroboros_gates.events.projections import PROJECTIONS
from ouroboros_gates.events.projector import catch_up
from ouroboros_gates.harness import Unread
from ouroboros_gates.llm import endpoint_from_settings
from ouroboros_gates.ops.embedded import MessageFailed, SharedFleet
from ouroboros_gates.ops.ingest import expand_runs, ingest_messages
from ouroboros_gates.ops.loop.hands import hands_step
from ouroboros_gates.ops.loop.ingest import ingest_step, measure_step
from ouroboros_gates.ops.loop.precheck import label_step, precheck_step
from ouroboros_gates.ops.loop.pushes import decide_step
from ouroboros_gates.ops.loop.queue import Handled
from ouroboros_gates.ops.loop.summary import (
    print_backtests,
    print_decisions,
    print_findings,
    print_labels,
    print_ledger,
    print_runs,
    print_series,
)
from ouroboros_gates.ops.loop.summary_hands import print_fixers, print_train, print_verdicts
from ouroboros_gates.schemas import IngestRun, content_id
from ouroboros_gates.schemas.settings import SAMPLE, Settings, load_settings
from ouroboros_gates.workers import QUEUES

__all__ = ["loop_forge", "run_loop"]


def run_loop(
    corpus: Path | None, console: Console, settings: Settings | None = None, fixers: bool = False
) -> int:
    """Ingest ``corpus`` (None: the sample corpus shipped with the package) through the real queue path, fold
    the ledger, print the summary; the exit status (1 when a step was not handled, or a file of the corpus
    could not be read or is of no known format)."""
    settings = _loop_settings(settings or load_settings(), corpus, fixers)
    corpus = corpus or SAMPLE
    store = open_store(settings.event_log_url)
    messages, unread = _read_corpus(corpus, settings, console)
    forge_settings = loop_forge(corpus, settings)
    if not _on_one_fleet(store, settings, forge_settings, messages, console):
        return 1
    catch_up(store, PROJECTIONS)
    _summary(store, settings, forge_settings, {m.run for m in messages}, console)
    return _exit_status(unread, console)


def _exit_status(unread: list[Unread], console: Console) -> int:
    """1, having said so, when a file of the corpus could not be read; else 0."""
    if unread:
        console.print(f"[yellow]{len(unread)} file(s) not read (named above): exit status 1[/]")
    return 1 if unread else 0


def _read_corpus(corpus: Path, settings: Settings, console: Console) -> tuple[list[IngestRun], list[Unread]]:
    """The corpus's runs as ingest messages, and the files of it that could not be read; says which runs were
    skipped and which files not read."""
    vanished: list[Path] = []
    unread: list[Unread] = []
    messages = ingest_messages(expand_runs([str(corpus)]), settings, vanished, unread)
    console.print(f"[bold]Ouroboros[/] on {escape(str(corpus))} — state in {escape(str(settings.state_dir))}")
    _print_vanished(vanished, console)
    for bad in unread:
        console.print(f"[yellow]{escape(str(bad))}[/]")
    return messages, unread


def _on_one_fleet(
    store: LedgerStore,
    settings: Settings,
    forge_settings: Settings | None,
    messages: list[IngestRun],
    console: Console,
) -> bool:
    """The steps on one shared fleet, closed after them; False (having said why) when one was not handled or
    a message failed."""
    # One worker for every step, started when first needed.
    shared = SharedFleet(forge_settings or settings, _fleet_queues(settings))
    try:
        return _steps(store, settings, forge_settings, messages, shared, console)
    except MessageFailed as failed:
        console.print(f"[red]{escape(str(failed))}[/]")
        return False
    finally:
        shared.close()


def _fleet_queues(settings: Settings) -> list[str]:
    """Every queue, but the labeler's without a chat model: the label requests wait there for a labeler that
    has one."""
    labels = endpoint_from_settings(settings) is not None
    return [queue for queue in dict.fromkeys(QUEUES.values()) if labels or queue != QUEUES["labeler"]]


def _loop_settings(settings: Settings, corpus: Path | None, fixers: bool) -> Settings:
    """The settings the loop runs with: the sample corpus (``corpus`` None), wherever the package lies, a root
    its messages may name; fixers on when asked for."""
    if corpus is None:
        settings = settings.with_roots(*([] if settings.roots else [os.getcwd()]), SAMPLE)
    return settings.model_copy(update={"fixers": True}) if fixers else settings


def _print_vanished(vanished: list[Path], console: Console) -> None:
    for path in vanished:
        console.print(f"[yellow]skipped {escape(str(path))}: deleted while the corpus was read[/]")
    if vanished:
        console.print(f"[yellow]{len(vanished)} run(s) skipped: their files vanished[/]")


def loop_forge(corpus: Path, settings: Settings) -> Settings | None:
    """The settings whose forge the main job pre-checks: the corpus's own ``forge/`` when it has one, else
    ``OURO_FORGE`` when it was set; None when there is neither."""
    if (corpus / "forge" / "tickets").is_dir():
        return settings.model_copy(update={"forge": str(corpus.resolve())})
    return settings if "forge" in settings.model_fields_set else None


def _steps(
    store: LedgerStore,
    settings: Settings,
    forge_settings: Settings | None,
    messages: list[IngestRun],
    shared: SharedFleet,
    console: Console,
) -> bool:
    """Ingest and mine, pre-check, label, fixers and the merge train, decide, measure: each through the
    queue, each waiting for its messages; False (having said why) when one was not handled in time."""
    run_keys = [m.message_id for m in messages]  # the runs the pre-check's verdicts depend on
    if not _ingest_and_mine(store, settings, messages, shared, console):
        return False
    steps = _forge_steps(store, forge_settings, run_keys, shared)
    steps.append((partial(measure_step, store, settings, shared), "the measurement was not handled"))
    for step, failed in steps:
        if not step().ok:
            console.print(f"[red]{failed} in time; see the worker log[/]")
            return False
    return True


_Step = tuple[Callable[[], Handled], str]
"""A step of the loop, and what to say when it was not handled in time."""


def _forge_steps(
    store: LedgerStore, forge_settings: Settings | None, run_keys: list[str], shared: SharedFleet
) -> list[_Step]:
    """The steps on the forge (none without one): pre-check, label, fixers and the merge train, decide."""
    if forge_settings is None:
        return []
    key = content_id(*sorted(run_keys))
    return [
        (partial(precheck_step, store, forge_settings, key, shared), "the pre-check was not handled"),
        (partial(label_step, store, forge_settings, shared), "the label requests were not handled"),
        (
            partial(hands_step, store, forge_settings, shared),
            "the fixers or the merge train were not handled",
        ),
        (partial(decide_step, store, forge_settings, shared), "the example pushes were not decided"),
    ]


def _ingest_and_mine(
    store: LedgerStore, settings: Settings, messages: list[IngestRun], shared: SharedFleet, console: Console
) -> bool:
    """The runs ingested and mined (``ingest_step``); False, having said which messages were not handled in
    time, when one was not."""
    done = ingest_step(store, settings, messages, shared)
    if not done.ok:
        console.print(f"[red]{len(done.left)} message(s) not handled in time: {', '.join(done.left)}[/]")
    return done.ok


def _summary(
    store: LedgerStore,
    settings: Settings,
    forge_settings: Settings | None,
    runs: set[str],
    console: Console,
) -> None:
    """Every section of the summary, from the ledger."""
    print_runs(store, runs, console)
    print_findings(store, runs, console)
    print_backtests(store, console)
    if forge_settings is not None:
        print_verdicts(store, console, forge_settings)
        print_labels(store, console)
        print_fixers(store, forge_settings, console)
        print_train(store, console)
        print_decisions(store, forge_settings, console)
    print_series(settings, console)
    print_ledger(store, console)
    console.print(f"ops page: `ouro serve`, then http://{settings.api_host}:{settings.api_port}/")
