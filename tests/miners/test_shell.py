"""The shell words a miner reads: the same words as ``shlex`` (a property test against it), here-documents
dropped as a line-by-line reference drops them, and work that grows linearly with the command (counted in
Python steps, not timed) and stops growing past ``MAX_COMMAND``."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from functools import partial
from types import FrameType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ouroboros_gates.miners import shell
from ouroboros_gates.miners.shell import (
    MAX_COMMAND,
    invocations,
    simple_commands,
    split_words,
    strip_heredocs,
)

# Every character the splitter treats apart, and a few it does not (a vertical tab is no blank to shlex).
PIECES = [
    " ",
    "\t",
    "\r",
    "\n",
    "'",
    '"',
    "\\",
    ";",
    "&",
    "|",
    "(",
    ")",
    "<",
    ">",
    "#",
    "$",
    "-",
    "a",
    "é",
    "\x0b",
]
HEREDOC_PIECES = ["<<", "<<-", "A", "B", "'A'", '"B"', "\n", " ", "\t", "\r", "x", "<", "-", "AB"]


def shlex_words(text: str) -> tuple[str, ...]:
    """What ``shlex`` makes of ``text`` with the splitter's settings (an error: no words)."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars="();<>|&\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return tuple(lexer)
    except ValueError:
        return ()


def line_by_line(command: str) -> str:
    """Here-documents dropped the plain way: line by line, each body until its delimiter line."""
    kept: list[str] = []
    closing: list[str] = []
    for line in command.split("\n"):
        if closing:
            if line.strip() == closing[0]:
                closing.pop(0)
            continue
        kept.append(line)
        closing = [match.group(2) for match in shell._HEREDOC.finditer(line)]
    return "\n".join(kept)


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=24).map("".join))
def test_split_words_reads_what_shlex_reads(text: str) -> None:
    assert split_words(text) == shlex_words(text)


@settings(max_examples=1000, deadline=None)
@given(st.text(max_size=40))
def test_split_words_reads_any_text_as_shlex_does(text: str) -> None:
    assert split_words(text) == shlex_words(text)


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(HEREDOC_PIECES), max_size=20).map("".join))
def test_here_documents_are_dropped_as_line_by_line_drops_them(command: str) -> None:
    assert strip_heredocs(command) == line_by_line(command)


def test_a_cut_command_keeps_the_words_before_the_cut() -> None:
    assert split_words('pkill -f "node server.js"; echo "no end', cut=True) == (
        "pkill",
        "-f",
        "node server.js",
        ";",
    )
    assert split_words("pkill -f x; echo abcdef", cut=True) == (
        "pkill",
        "-f",
        "x",
        ";",
        "echo",
    )  # abcdef… cut
    assert split_words('echo "no end') == ()  # whole, an unclosed quote is no command


def test_quoted_text_is_never_an_operator_or_a_program() -> None:
    assert [name for name, _ in invocations("echo ';' pkill -f x")] == ["echo"]
    assert simple_commands("find . -exec rm {} ';'") == [["find", ".", "-exec", "rm", "{}", ";"]]
    assert [name for name, _ in invocations("/usr/bin/timeout 60 pkill -f x")] == ["pkill"]


def test_a_command_past_max_command_is_read_on_its_first_max_command_characters() -> None:
    padding = "echo " + "a" * (10 << 20)
    assert [name for name, _ in invocations("pkill -f 'node server.js'; " + padding)] == ["pkill", "echo"]
    assert [name for name, _ in invocations(padding + "; pkill -f x")] == ["echo"]  # past the cut: not read
    body = "cat <<'EOF'\n" + "text\n" * (1 << 20) + "EOF\npkill -f x"  # a here-document's body is no word
    assert [name for name, _ in invocations(body)] == ["cat", "pkill"]


def _steps(work: Callable[[], Any]) -> int:
    """How many Python lines ``work`` runs, in any module (a count, the same on any machine; work done inside
    one C call, such as copying a string, is not counted: ``benchmarks/hook.py`` times that)."""
    count = 0

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        count += event == "line"
        return trace

    sys.settrace(trace)
    try:
        work()
    finally:
        sys.settrace(None)
    return count


SHAPES: dict[str, Callable[[int], str]] = {
    "words": lambda n: "ab " * n,
    "operators": lambda n: "a;" * n,
    "quotes": lambda n: "echo " + "'x'\"y\"\\z " * n,
    "wrappers": lambda n: "sudo " * n + "pkill -f x",
    "assignments": lambda n: "A=1 " * n + "pkill -f x",
    "here-documents": lambda n: "cat <<A <<B\n" + "x\nA\n" * n + "B\n" + "pkill -f x ; " * n,
    "substitutions": lambda n: 'echo "$(pgrep -f x)" ' * n,
    "shells": lambda n: "bash -c 'pkill -f x' " * n,
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_work_grows_linearly_with_the_command(shape: str) -> None:
    make = SHAPES[shape]
    shell._cached_tokens.cache_clear()
    shell._invocations.cache_clear()
    sizes = [200, 400, 800]  # up to MAX_COMMAND: read whole
    assert len(make(sizes[-1])) <= MAX_COMMAND
    steps = [_steps(partial(invocations, make(n))) for n in sizes]
    assert steps[1] / steps[0] < 2.2 and steps[2] / steps[1] < 2.2, steps


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_work_stops_growing_past_max_command(shape: str) -> None:
    make = SHAPES[shape]
    at_cut = _steps(partial(invocations, make(MAX_COMMAND)))
    far_past = _steps(partial(invocations, make(8 * MAX_COMMAND)))
    assert far_past <= at_cut * 1.05, (at_cut, far_past)
