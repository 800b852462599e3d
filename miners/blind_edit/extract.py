"""BLIND-EDIT's extractor: one harness run in, a fact per missed edit, per pair of one agent's consecutive
edits of one file, and per look at that file between them, each at the line that shows it.

An ``Edit`` (or ``MultiEdit``) fails with ``String to replace not found in file.`` when its
``old_string`` is not in the file: the agent wrote it from a stale memory of the file (another edit, a
formatter or a hook changed it since it was read). The result's text says so (``HarnessEvent.result_text``;
the flag ``is_error`` alone cannot tell this failure from any other). Three facts, per run R:

- ``missed(R, C, F)``: edit call C of file F was answered by that error, at the result's line;
- ``next_edit(R, C1, C2)``: C2 is the same agent's next edit of the same file after C1 (the main agent
  and each subagent apart), at C2's line;
- ``looked(R, C1, C2)``: between C1 and C2 that agent read or wrote the file (``Read``, ``Write``), at the
  line of the look.

A call without a ``tool_use_id`` is named by its line (``line N``). Pure: reads the run, nothing else.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from ouroboros_gates.miners.corpus import CorpusItem
from ouroboros_gates.schemas import Fact, HarnessEvent, HarnessKind, Span, Text

NAME = "blind-edit"
PACKAGE = "ouroboros_gates.miners.blind_edit"
VERDICTS = ("blind_edit",)
SCOPE = "generic"
CORPUS = ("jsonl",)
SEVERITY = "SEVERITY_S3"
GATE = "warn"

NOT_FOUND = "String to replace not found"
"""What Claude Code's Edit tool answers when its ``old_string`` is not in the file."""
EDITS = frozenset({"Edit", "MultiEdit"})
LOOKS = frozenset({"Read", "Write"})


@dataclass
class _File:
    """One agent's history of one file: its last edit, and the looks at the file since."""

    last_edit: Text | None = None
    looks: list[Span] = field(default_factory=list)


def _call(event: HarnessEvent) -> Text:
    return Text(text=event.tool_use_id or f"line {event.span.line}")


def _path(event: HarnessEvent) -> str | None:
    path = (event.tool_input or {}).get("file_path")
    return path if isinstance(path, str) and path else None


def extract(item: CorpusItem) -> Iterator[Fact]:
    """``missed``, ``next_edit`` and ``looked`` for every edit and look of the run's agents."""
    run = Text(text=item.instance)
    files: dict[tuple[str | None, str], _File] = {}
    edits: dict[str, str] = {}  # an edit call's id -> the file it edits
    for event in item.events():
        if (path := _touched(event)) is not None:
            history = files.setdefault((event.agent, path), _File())
            if event.tool in LOOKS:
                history.looks.append(event.span)
                continue
            edits[_call(event).text] = path
            yield from _edited(run, history, event)
        elif (path := _missed(event, edits)) is not None:
            yield Fact(predicate="missed", args=(run, _call(event), Text(text=path)), span=event.span)


def _touched(event: HarnessEvent) -> str | None:
    """The file an edit or a look calls on; None for any other event."""
    return _path(event) if event.kind is HarnessKind.TOOL_CALL and event.tool in EDITS | LOOKS else None


def _missed(event: HarnessEvent, edits: dict[str, str]) -> str | None:
    """The file of the edit whose string to replace this result says is not there; None for any other."""
    return edits.get(event.tool_use_id or "") if _not_found(event) else None


def _edited(run: Text, history: _File, event: HarnessEvent) -> Iterator[Fact]:
    """The facts of an edit of a file since its agent's last edit of it; the edit becomes the last."""
    call = _call(event)
    if history.last_edit is not None:
        yield Fact(predicate="next_edit", args=(run, history.last_edit, call), span=event.span)
        for span in history.looks:
            yield Fact(predicate="looked", args=(run, history.last_edit, call), span=span)
    history.last_edit, history.looks = call, []


def _not_found(event: HarnessEvent) -> bool:
    """Whether the event is a failed result saying the string to replace is not in the file."""
    return event.kind is HarnessKind.TOOL_RESULT and event.is_error and NOT_FOUND in (event.result_text or "")
