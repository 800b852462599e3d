"""The shell words of a Bash tool call's command, as far as a miner needs them: the simple commands
it runs, each with its program first.

A command is cut into simple commands at the shell's control operators (``;``, ``&&``, ``||``,
``|``, ``&``, ``(``, ``)``, newlines), after the bodies of its here-documents are dropped (text fed
to a program, never run: a ``gh issue comment --body "$(cat <<'EOF' …`` quoting ``pkill -f`` runs
no pkill). Redirections are dropped with their targets; the program of a simple command is its first
word once variable assignments, reserved words (``if``, ``then``, ``do``, ``while`` …) and wrappers
that run the rest of the line (``sudo``, ``timeout 60``, ``nohup``, ``env``, ``nice``, ``time``,
``command``, ``exec``) are skipped. Text the shell does not run (a quoted string, a comment) is never
a program. A command the shell could not parse either (an unclosed quote) has no simple commands.
"""

from __future__ import annotations

import re
import shlex
from functools import lru_cache

__all__ = ["RESERVED", "SimpleCommand", "invocations", "program", "simple_commands", "strip_heredocs"]

SimpleCommand = list[str]

RESERVED = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "{", "}", "!"})
"""Reserved words that may open a simple command and are not its program."""

_OPERATORS = "();<>|&\n"
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_SUBSTITUTION = re.compile(r"\$\(([^()]*)\)")
_SHELLS = frozenset({"sh", "bash", "dash", "zsh"})
_WRAPPERS = frozenset({"sudo", "nohup", "env", "nice", "time", "command", "exec", "timeout", "stdbuf"})


def strip_heredocs(command: str) -> str:
    """``command`` with the body and the delimiter line of each here-document removed."""
    lines = command.split("\n")
    kept: list[str] = []
    closing: list[str] = []
    for line in lines:
        if closing:
            if line.strip() == closing[0]:
                closing.pop(0)
            continue
        kept.append(line)
        closing = [match.group(2) for match in _HEREDOC.finditer(line)]
    return "\n".join(kept)


@lru_cache(maxsize=8192)
def _words(command: str) -> tuple[str, ...]:
    """The shell words of ``command`` (cached: a live gate re-reads the same commands on every call)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=_OPERATORS)
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = ""  # a '#' inside a word (``$#``, a URL) is no comment; a comment's words run nothing
    try:
        return tuple(lexer)
    except ValueError:  # an unclosed quote: the shell would refuse the command too
        return ()


def _is_operator(word: str) -> bool:
    return bool(word) and all(char in _OPERATORS for char in word)


def simple_commands(command: str) -> list[SimpleCommand]:
    """The simple commands of ``command``, in order, each a list of words without redirections."""
    found: list[SimpleCommand] = []
    current: SimpleCommand = []
    words = iter(_words(strip_heredocs(command)))
    for word in words:
        if _is_operator(word) and ("<" in word or ">" in word):
            next(words, None)  # a redirection and its target: not a word of the command
            if current and current[-1].isdigit():
                current.pop()  # the file descriptor of ``2>&1``
        elif _is_operator(word):
            if current:
                found.append(current)
            current = []
        else:
            current.append(word)
    if current:
        found.append(current)
    return found


def _skip_wrapper(words: SimpleCommand) -> SimpleCommand:
    """The words after one wrapper and its own options (``timeout -s KILL 60 cmd`` → ``cmd``)."""
    wrapper, rest = words[0], words[1:]
    while rest and (rest[0].startswith("-") or _ASSIGNMENT.match(rest[0])):
        option = rest.pop(0)
        if wrapper in {"timeout", "nice", "sudo"} and option in {"-s", "--signal", "-k", "-n", "-u", "-g"} and rest:
            rest.pop(0)
    if wrapper == "timeout" and rest:
        rest.pop(0)  # the duration
    return rest


def program(words: SimpleCommand) -> tuple[str, SimpleCommand] | None:
    """The program a simple command runs (its base name) and its arguments; None when it runs none."""
    rest = list(words)
    while rest:
        head = rest[0]
        if head in RESERVED or _ASSIGNMENT.match(head):
            rest.pop(0)
        elif head.rsplit("/", 1)[-1] in _WRAPPERS:
            rest = _skip_wrapper(rest)
        else:
            return head.rsplit("/", 1)[-1], rest[1:]
    return None


def invocations(command: str) -> list[tuple[str, SimpleCommand]]:
    """Every program ``command`` runs with its arguments, in order, including those of a command
    substitution left inside a quoted word (``"$(pgrep -f x)"``) and of ``bash -c STRING``."""
    return [(name, list(args)) for name, args in _invocations(command)]


@lru_cache(maxsize=8192)
def _invocations(command: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    # A gate re-reads a session's every command on each call; agents repeat commands: parse each once.
    return tuple((name, tuple(args)) for name, args in _parse_invocations(command))


def _parse_invocations(command: str) -> list[tuple[str, SimpleCommand]]:
    found: list[tuple[str, SimpleCommand]] = []
    for words in simple_commands(command):
        run = program(words)
        if run is not None:
            found.append(run)
            name, args = run
            if name in _SHELLS and "-c" in args[:-1]:
                found += invocations(args[args.index("-c") + 1])
        for word in words:
            for inner in _SUBSTITUTION.findall(word) if "$(" in word else ():
                found += invocations(inner)
    return found
