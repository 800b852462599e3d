"""DRAFT-PR-LATE's extractor: one harness run in, ``gated(R)`` and ``score(R, S)`` out.

``score`` is the number of seconds from the run's first timestamp to the ``tool_result`` of its first
successful draft pull request (a Bash call running ``gh pr create … --draft …`` whose result is not an
error), or to the run's last timestamp when it opened none. First and last are by time, over **all** of the
run's files (a Claude Code session's transcript and its subagents', read one after the other, interleave in
time: the file read last need not end last). Its span is that result's line (or the line of the last
timestamp); ``gated``'s is the line of the first timestamp.

``gated(R)`` holds for every harness run: our runs carry no marker of the session gates yet, and
every run the harness records ran under them. The rule keeps the literal so that a miner copied from
this one reads the gate when runs start to carry it (a mutant that drops it is equivalent here).

A miner copied from this one reads the same events: besides ``kind``, ``tool``, ``tool_input`` and
``is_error``, a tool result carries its text in ``result_text`` (the error message a rule may need, as
``blind_edit`` reads ``String to replace not found``), ``agent`` names the subagent that made a call
(None for the main agent), and ``item.events()`` leaves out the relayed lines a subagent's own
transcript repeats, so a Claude Code session (an item named by its ``sessionId``) shows each call once.
A miner that measures time takes first and last by timestamp, as ``extract`` below does, never by reading
order.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime
from typing import NamedTuple

from ouroboros_gates.miners.corpus import CorpusItem
from ouroboros_gates.schemas import Fact, HarnessEvent, HarnessKind, Number, Span, Text

NAME = "draft-pr-late"
PACKAGE = "ouroboros_gates.miners._template"
VERDICTS = ("invisible",)
SCOPE = "generic"
CORPUS = ("jsonl",)
SEVERITY = "SEVERITY_S3"
GATE = "warn"

DRAFT_PR = re.compile(r"\bgh\s+pr\s+create\b[^;&|\n]*\s--draft\b")
"""A ``gh pr create`` command with ``--draft`` among its own arguments (not a later command's)."""


def _opens_draft(event: HarnessEvent) -> bool:
    command = (event.tool_input or {}).get("command")
    return event.tool == "Bash" and isinstance(command, str) and DRAFT_PR.search(command) is not None


class _Moment(NamedTuple):
    """When an event happened, and the line that says so."""

    at: datetime
    span: Span


def extract(item: CorpusItem) -> Iterator[Fact]:
    """``gated(R)`` and ``score(R, S)`` for the run; nothing for a run without a timestamp."""
    run = Text(text=item.instance)
    timed = _timed(item)
    if not timed:
        return
    moments = [moment for _event, moment in timed]
    first = min(moments, key=_at)  # ties: the one read first
    last = max(reversed(moments), key=_at)  # ties: the one read last
    drafted = list(_draft_results(timed))
    end = min(drafted, key=_at) if drafted else last
    yield Fact(predicate="gated", args=(run,), span=first.span)
    seconds = Number(number=(end.at - first.at).total_seconds())
    yield Fact(predicate="score", args=(run, seconds), span=end.span)


def _timed(item: CorpusItem) -> list[tuple[HarnessEvent, _Moment]]:
    """The run's events that carry a timestamp, each with its moment."""
    return [
        (event, _Moment(event.timestamp, event.span))
        for event in item.events()
        if event.timestamp is not None
    ]


def _at(moment: _Moment) -> datetime:
    return moment.at


def _draft_results(timed: list[tuple[HarnessEvent, _Moment]]) -> Iterator[_Moment]:
    """When the successful results of draft pull-request calls came. A result may be read before its
    call (hook payloads kept in separate files), so the calls are gathered first; a hook's result
    carries its own input."""
    drafts = _draft_calls(timed)
    for event, moment in timed:
        if _succeeded(event) and (_opens_draft(event) or event.tool_use_id in drafts):
            yield moment


def _draft_calls(timed: list[tuple[HarnessEvent, _Moment]]) -> set[str | None]:
    """The ids of the calls that open a draft pull request."""
    return {event.tool_use_id for event, _moment in timed if _calls_draft(event)}


def _calls_draft(event: HarnessEvent) -> bool:
    return event.kind is HarnessKind.TOOL_CALL and bool(event.tool_use_id) and _opens_draft(event)


def _succeeded(event: HarnessEvent) -> bool:
    return event.kind is HarnessKind.TOOL_RESULT and not event.is_error
