"""DRAFT-PR-LATE's extractor: one harness run in, ``gated(R)`` and ``score(R, S)`` out.

``score`` is the number of seconds from the run's first timestamped event to the ``tool_result`` line
of its first successful draft pull request (a Bash call running ``gh pr create … --draft …`` whose
result is not an error), or to the run's last timestamped event when it opened none. Its span is
that result line (or that last line); ``gated``'s is the run's first line.

``gated(R)`` holds for every harness run: our runs carry no marker of the session gates yet, and
every run the harness records ran under them. The rule keeps the literal so that a miner copied from
this one reads the gate when runs start to carry it (a mutant that drops it is equivalent here).

A miner copied from this one reads the same events: besides ``kind``, ``tool``, ``tool_input`` and
``is_error``, a tool result carries its text in ``result_text`` (the error message a rule may need, as
``blind_edit`` reads ``String to replace not found``), ``agent`` names the subagent that made a call
(None for the main agent), and ``item.events()`` leaves out the relayed lines a subagent's own
transcript repeats, so a Claude Code session (an item named by its ``sessionId``) shows each call once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ouroboros_gates.miners.corpus import CorpusItem
from ouroboros_gates.schemas import Fact, HarnessEvent, HarnessKind, Number, Text

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


def extract(item: CorpusItem) -> Iterator[Fact]:
    """``gated(R)`` and ``score(R, S)`` for the run; nothing for a run without a timestamp."""
    run = Text(text=item.instance)
    first: HarnessEvent | None = None
    last: HarnessEvent | None = None
    drafts: set[str] = set()
    for event in item.events():
        if event.timestamp is None:
            continue
        first = first or event
        last = event
        if event.kind is HarnessKind.TOOL_CALL and event.tool_use_id and _opens_draft(event):
            drafts.add(event.tool_use_id)
        elif (
            event.kind is HarnessKind.TOOL_RESULT
            and not event.is_error
            and (
                event.tool_use_id in drafts or _opens_draft(event)  # a hook's result carries its own input
            )
        ):
            break  # the first draft pull request: no later line can change the score
    if first is None or last is None or first.timestamp is None or last.timestamp is None:
        return
    seconds = (last.timestamp - first.timestamp).total_seconds()
    yield Fact(predicate="gated", args=(run,), span=first.span)
    yield Fact(predicate="score", args=(run, Number(number=seconds)), span=last.span)
