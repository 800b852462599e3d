"""SELF-MATCH's extractor: one harness run in, a fact per ``pgrep``/``pkill``/``pidwait`` invocation
of its Bash calls out, each at the line of the call.

Claude Code runs a Bash call's command in a shell whose own command line holds the whole command
text, and the shell stays alive while it runs (the harness appends its own commands after it). So
``pkill -f P``, which matches P against every process's *whole* command line, also matches that
shell whenever P matches the command text: ``pgrep`` then prints the shell's pid beside the one it
looked for (a new pid on every poll), and ``pkill`` kills the shell (``Exit code 143``). Three facts
describe each invocation with pattern P in call C (the ``tool_use_id``) of run R:

- ``full_line(R, C, P)``: it matches full command lines (``-f``/``--full``); without it only process
  names are matched, and the shell's name is ``bash``;
- ``own_line(R, C, P)``: P selects the call's own command text, read as pgrep reads it (an extended
  regular expression, ``-i`` ignoring case, ``-x`` matching the whole line, ``-v`` inverting);
  ``[p]ytest`` selects ``pytest`` but not its own text, so the bracket idiom does not self-match;
- ``ignores_ancestors(R, C, P)``: it passes ``-A``/``--ignore-ancestors`` (procps-ng 4), which skips
  its own shell.

One call running P twice (``pkill -f P; sleep 1; pgrep -f P``) has one fact of each: P matches full
lines or selects the text if any of its invocations does, and ignores ancestors only if all do.

A call without a ``tool_use_id`` is named by its line (``line N``). Pure: reads the run, nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ouroboros_gates.miners.corpus import CorpusItem
from ouroboros_gates.miners.shell import SimpleCommand, invocations
from ouroboros_gates.schemas import Fact, HarnessEvent, HarnessKind, Span, Text

NAME = "self-match"
PACKAGE = "ouroboros_gates.miners.self_match"
VERDICTS = ("self_match",)
SCOPE = "generic"
CORPUS = ("jsonl",)
SEVERITY = "SEVERITY_S2"
GATE = "deny"
LOCAL = True
"""Each fact comes from one Bash call alone: the gate keeps a session's facts call by call."""

PROGRAMS = frozenset({"pgrep", "pkill", "pidwait"})
"""The procps programs that select processes by a pattern."""

_WITH_VALUE = frozenset("dgGPstuUFrqO")
_LONG_WITH_VALUE = frozenset(
    {
        "--delimiter",
        "--pgroup",
        "--group",
        "--parent",
        "--session",
        "--terminal",
        "--euid",
        "--uid",
        "--pidfile",
        "--runstates",
        "--queue",
        "--older",
        "--ns",
        "--nslist",
        "--signal",
        "--cgroup",
        "--env",
    }
)
_LONG_FLAGS = {
    "--full": "f",
    "--ignore-case": "i",
    "--exact": "x",
    "--inverse": "v",
    "--ignore-ancestors": "A",
}
_SIGNAL = re.compile(
    r"^-(?:[0-9]+|(?:SIG)?(?:HUP|INT|QUIT|ILL|TRAP|ABRT|IOT|BUS|FPE|KILL|USR1|SEGV|USR2|PIPE|ALRM|TERM|STKFLT"
    r"|CHLD|CONT|STOP|TSTP|TTIN|TTOU|URG|XCPU|XFSZ|VTALRM|PROF|WINCH|IO|POLL|PWR|SYS|RTMIN(?:[+-][0-9]+)?"
    r"|RTMAX(?:-[0-9]+)?))$"
)
"""pkill's leading signal (``-9``, ``-TERM``, ``-SIGKILL``): named, so that ``-A`` or ``-F`` stay options."""


@dataclass(frozen=True)
class Selection:
    """One invocation of a procps selector: its pattern and the flags that decide what it selects."""

    pattern: str
    flags: frozenset[str]

    def selects(self, line: str) -> bool:
        """Whether the pattern selects ``line`` as pgrep would (``-i``, ``-x``, ``-v`` honoured)."""
        return self._hits(line) != ("v" in self.flags)

    def _hits(self, line: str) -> bool:
        """Whether the pattern matches ``line`` (``-i``, ``-x`` honoured; ``-v`` aside)."""
        try:
            return self._regex_hits(line)
        except re.error:  # not a regular expression Python reads: compare it as text
            return self._text_hits(line)

    def _regex_hits(self, line: str) -> bool:
        regex = re.compile(self.pattern, re.IGNORECASE if "i" in self.flags else 0)
        return (regex.fullmatch if "x" in self.flags else regex.search)(line) is not None

    def _text_hits(self, line: str) -> bool:
        needle, hay = (self.pattern.lower(), line.lower()) if "i" in self.flags else (self.pattern, line)
        return needle == hay if "x" in self.flags else needle in hay


def selection(args: SimpleCommand) -> Selection | None:
    """The pattern and flags of a ``pgrep``/``pkill``/``pidwait`` argument list; None without a pattern."""
    flags: set[str] = set()
    words = _without_signal(list(args))
    while words:
        word = words.pop(0)
        if word == "--":
            break
        if not _read_option(word, words, flags):
            return Selection(word, frozenset(flags))
    return Selection(words[0], frozenset(flags)) if words else None


def _without_signal(words: list[str]) -> list[str]:
    """The words without pkill's leading signal (``pkill -9``, ``pkill -TERM``)."""
    if words and _SIGNAL.match(words[0]):
        words.pop(0)
    return words


def _read_option(word: str, words: list[str], flags: set[str]) -> bool:
    """Reads an option word into ``flags`` (its value given apart taken off ``words``); False when the
    word is no option: it is the pattern."""
    if word.startswith("--"):
        _long_option(word, words, flags)
        return True
    if word.startswith("-") and len(word) > 1:
        _short_options(word, words, flags)
        return True
    return False


def _long_option(word: str, words: list[str], flags: set[str]) -> None:
    """Reads ``--name`` or ``--name=value`` into ``flags``; a value given apart is taken off ``words``."""
    name = word.split("=", 1)[0]
    if name in _LONG_FLAGS:
        flags.add(_LONG_FLAGS[name])
    elif name in _LONG_WITH_VALUE and "=" not in word and words:
        words.pop(0)


def _short_options(word: str, words: list[str], flags: set[str]) -> None:
    """Reads a cluster of short options (``-fx``) into ``flags`` up to the first that takes a value."""
    for position, letter in enumerate(word[1:], start=1):
        if letter in _WITH_VALUE:
            if position == len(word) - 1 and words:
                words.pop(0)  # -u 1000; -u1000 carries its value
            return
        flags.add(letter)


def _command(event: HarnessEvent) -> str | None:
    command = (event.tool_input or {}).get("command")
    is_bash = event.kind is HarnessKind.TOOL_CALL and event.tool == "Bash"
    return command if is_bash and isinstance(command, str) else None


def _by_pattern(command: str) -> dict[str, list[Selection]]:
    """The selections the command's procps selectors make, grouped by pattern."""
    found: dict[str, list[Selection]] = {}
    for name, args in invocations(command):
        chosen = selection(args) if name in PROGRAMS else None
        if chosen is not None:
            found.setdefault(chosen.pattern, []).append(chosen)
    return found


def _full_line(selections: list[Selection], _command: str) -> bool:
    """Whether a selector of the pattern matches full command lines (``-f``)."""
    return any("f" in s.flags for s in selections)


def _own_line(selections: list[Selection], command: str) -> bool:
    """Whether a selection of the pattern selects the command's own line."""
    return any(s.selects(command) for s in selections)


def _ignores_ancestors(selections: list[Selection], _command: str) -> bool:
    """Whether every selector of the pattern leaves the caller's ancestors out (``-A``)."""
    return all("A" in s.flags for s in selections)


_PATTERN_FACTS: dict[str, Callable[[list[Selection], str], bool]] = {
    "full_line": _full_line,
    "own_line": _own_line,
    "ignores_ancestors": _ignores_ancestors,
}
"""Each fact of a pattern, in the order written, and whether the command's selections of it hold it."""


def _facts(run: Text, call: Text, command: str, span: Span) -> Iterator[Fact]:
    for pattern, selections in _by_pattern(command).items():
        key = (run, call, Text(text=pattern))
        for predicate, holds in _PATTERN_FACTS.items():
            if holds(selections, command):
                yield Fact(predicate=predicate, args=key, span=span)


def extract(item: CorpusItem) -> Iterator[Fact]:
    """``full_line``, ``own_line`` and ``ignores_ancestors`` for every selector the run's Bash calls run."""
    run = Text(text=item.instance)
    for event in item.events():
        command = _command(event)
        if command is not None:
            call = Text(text=event.tool_use_id or f"line {event.span.line}")
            yield from _facts(run, call, command, event.span)
