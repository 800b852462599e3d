"""SLEEP-POLL's extractor: one harness run in, its polls after a ``sleep`` and its sleeping shell loops
out, each at the line of the Bash call it came from.

- ``polled(R, P, N)``: run R ran the command P right after a ``sleep`` for the N-th time: a Bash call
  ``sleep 30; P`` or ``sleep 30 && P``, or a call P whose previous Bash call was only ``sleep 30``.
  P is the command text after the sleep, with its whitespace collapsed; the sleep's length is not
  part of it (``sleep 45; pgrep …`` and ``sleep 120; pgrep …`` poll the same thing). One fact per
  poll, at its call's line, so a finding's proof points at the poll that crossed the knee.
- ``loop(R, C)``: the Bash call C runs a ``while`` or ``until`` loop that sleeps, in its condition
  (``while sleep 5``) or its body: one call that polls until something happens, however long. A
  bounded ``for`` retry is not one.
- ``score(R, N)``: the most times run R polled one command after a sleep (0 when it polled none), at
  the line of the poll that reached it (the run's first line for 0): the knee's candidates.

Pure: reads the run, nothing else.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from ouroboros_gates.miners.corpus import CorpusItem
from ouroboros_gates.miners.shell import SimpleCommand, program, simple_commands
from ouroboros_gates.schemas import Fact, HarnessEvent, HarnessKind, Number, Span, Text

NAME = "sleep-poll"
PACKAGE = "ouroboros_gates.miners.sleep_poll"
VERDICTS = ("sleep_poll",)
SCOPE = "generic"
CORPUS = ("jsonl",)
SEVERITY = "SEVERITY_S3"
GATE = "warn"

# Possessive runs of blanks (*+): with two runs side by side, or a lazy run before one, a long run of blanks
# cost a time quadratic in its length (40,000 blanks: 10 s) in the gate server and the miner worker.
SLEEP_THEN = re.compile(
    r"^\s*+sleep\s++[0-9.]++[smhd]?(?:\s*+(?:;|&&)|[^\S\n]*+\n)\s*+(?P<poll>\S.*)", re.DOTALL
)
"""A command that opens with a sleep and then runs something: the something is the poll (its blanks
collapsed by ``_poll``)."""

SLEEP_ONLY = re.compile(r"^\s*+sleep\s++[0-9.]++[smhd]?\s*+;?\s*+$")
"""A command that only sleeps: the next Bash call is a poll."""

_LOOPS = frozenset({"while", "until", "for", "select"})
_LEADING = frozenset({"then", "do", "else", "{", "!"})


def _command(event: HarnessEvent) -> str | None:
    command = (event.tool_input or {}).get("command")
    is_bash = event.kind is HarnessKind.TOOL_CALL and event.tool == "Bash"
    return command if is_bash and isinstance(command, str) else None


@dataclass(slots=True)
class _Loop:
    """An open ``while``/``until``/``for``/``select`` loop, and whether it sleeps so far."""

    keyword: str
    sleeps: bool = False


def sleeping_loop(command: str) -> bool:
    """Whether ``command`` runs a ``while``/``until`` loop that sleeps in its condition or body."""
    loops = _OpenLoops()
    for words in simple_commands(command):
        opener = _opener(words)
        if opener in _LOOPS:
            loops.open.append(_Loop(opener))
        loops.note_sleep(words)
        if opener == "done" and loops.close():
            return True
    return False


def _opener(words: SimpleCommand) -> str:
    """The word a simple command opens with, past ``then``, ``do``, ``else``, ``{`` and ``!``."""
    return next((word for word in words if word not in _LEADING), "")


def _sleeps(words: SimpleCommand) -> bool:
    run = program(words)
    return run is not None and run[0] == "sleep"


@dataclass(slots=True)
class _OpenLoops:
    """The loops open at a point of a command, innermost last."""

    open: list[_Loop] = field(default_factory=list)

    def note_sleep(self, words: SimpleCommand) -> None:
        """The innermost loop sleeps if this simple command is a ``sleep``."""
        if self.open and _sleeps(words):
            self.open[-1].sleeps = True

    def close(self) -> bool:
        """Closes the innermost loop (if any); whether it was a ``while``/``until`` loop that sleeps."""
        if not self.open:
            return False
        loop = self.open.pop()
        if loop.sleeps and self.open:
            self.open[-1].sleeps = True  # an inner loop's sleep is the outer loop's too
        return loop.sleeps and loop.keyword in {"while", "until"}


def _poll(command: str, after_sleep: bool) -> str | None:
    """The polled command text, whitespace collapsed, or None when ``command`` polls nothing."""
    match = SLEEP_THEN.match(command)
    text = match.group("poll") if match else (command if after_sleep else None)
    return " ".join(text.split()) if text else None


@dataclass
class _Polls:
    """How many times each command was polled after a sleep, and the poll that reached the most."""

    counts: Counter[str] = field(default_factory=Counter)
    most: int = 0
    where: Span | None = None
    after_sleep: bool = False
    """Whether the previous Bash call only slept (its next call is a poll)."""

    def poll(self, command: str, span: Span) -> tuple[str, int] | None:
        """The command's poll and how many times it has been polled now, or None when it polls nothing."""
        sleeps_only = SLEEP_ONLY.match(command) is not None
        poll = None if sleeps_only else _poll(command, self.after_sleep)
        self.after_sleep = sleeps_only
        return None if poll is None else (poll, self.count(poll, span))

    def count(self, poll: str, span: Span) -> int:
        """Counts one more poll of ``poll`` at ``span``; how many there are now."""
        self.counts[poll] += 1
        if self.counts[poll] > self.most:
            self.most, self.where = self.counts[poll], span
        return self.counts[poll]


def extract(item: CorpusItem) -> Iterator[Fact]:
    """``polled``, ``loop`` and ``score`` facts for the run (none for a run without events)."""
    run = Text(text=item.instance)
    first: Span | None = None
    polls = _Polls()
    for event in item.events():
        first = first or event.span
        command = _command(event)
        if command is not None:
            yield from _call_facts(run, command, event, polls)
    if first is not None:
        yield Fact(predicate="score", args=(run, Number(number=polls.most)), span=polls.where or first)


def _call_facts(run: Text, command: str, event: HarnessEvent, polls: _Polls) -> Iterator[Fact]:
    """The ``polled`` and ``loop`` facts of one Bash call."""
    polled = polls.poll(command, event.span)
    if polled is not None:
        poll, times = polled
        yield Fact(predicate="polled", args=(run, Text(text=poll), Number(number=times)), span=event.span)
    if sleeping_loop(command):
        call = Text(text=event.tool_use_id or f"line {event.span.line}")
        yield Fact(predicate="loop", args=(run, call), span=event.span)
