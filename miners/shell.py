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

The words are those ``shlex`` reads (POSIX mode, the control operators as punctuation, no comments), split
by ``split_words`` in time linear in the command's length: ``shlex`` grows each word a character at a time
(quadratic: 15 s for a 1 MB word). A command longer than ``MAX_COMMAND`` characters is read on its first
``MAX_COMMAND`` (the word the cut falls in is dropped), so no command costs more than a few milliseconds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

__all__ = [
    "MAX_COMMAND",
    "RESERVED",
    "SimpleCommand",
    "invocations",
    "program",
    "simple_commands",
    "split_words",
    "strip_heredocs",
]

SimpleCommand = list[str]

RESERVED = frozenset(
    {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "for", "{", "}", "!"}
)
"""Reserved words that may open a simple command and are not its program."""

_OPERATORS = "();<>|&\n"
_HEREDOC = re.compile(r"<<-?[^\S\n]*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_SUBSTITUTION = re.compile(r"\$\(([^()]*)\)")
_SHELLS = frozenset({"sh", "bash", "dash", "zsh"})
_WRAPPERS = frozenset({"sudo", "nohup", "env", "nice", "time", "command", "exec", "timeout", "stdbuf"})

MAX_COMMAND = 1 << 15
"""The longest command text (here-documents aside) whose words are read whole: 32 KiB, read in a few
milliseconds whatever it holds; a longer one is read on this many characters."""

CACHED = 1 << 12
"""Commands up to this long are parsed once per process (a gate re-reads a session's commands; agents
repeat them); a longer one is parsed each time, so the cache never holds more than 32 MiB of text."""

# A word: runs of plain characters, '…' (literal), "…" (where \\ and \" lose their backslash), and \c (c),
# side by side. Every alternative opens with its own character and is possessive: nothing is scanned twice.
_WORD = r"""(?:[^ \t\r();<>|&\n'"\\]++|'[^']*+'|"[^"\\]*+(?:\\.[^"\\]*+)*+"|\\.)++"""
# Blanks before the end match as an empty token: findall would otherwise rescan them from each position.
_TOKEN = re.compile(rf"[ \t\r]*+(?:([{re.escape(_OPERATORS)}]++)|({_WORD})|\Z)", re.DOTALL)
_READABLE = re.compile(rf"(?:[ \t\r]++|[{re.escape(_OPERATORS)}]++|{_WORD})*+", re.DOTALL)
_QUOTES = re.compile(r"['\"\\\\]")
_QUOTING = re.compile(r"""'([^']*+)'|"((?:[^"\\]++|\\.)*+)"|\\(.)""", re.DOTALL)
_ESCAPED_IN_DOUBLE = re.compile(r'\\([\\"])')


def strip_heredocs(command: str) -> str:
    """``command`` with the body and the delimiter line of each here-document removed (the lines of the
    body are skipped by searching for the delimiter, so a long body costs what ``str.find`` does)."""
    if "<<" not in command:
        return command
    kept: list[str] = []
    position = 0
    while (opener := _HEREDOC.search(command, position)) is not None:
        line_end = command.find("\n", opener.end())
        if line_end < 0:
            break
        kept.append(command[position:line_end])
        position = line_end + 1
        for match in _HEREDOC.finditer(command, opener.start(), line_end):
            position = _after_delimiter(command, match.group(2), position)
        if position > len(command):  # a here-document never closed: the rest is its body
            return "\n".join(kept)
    kept.append(command[position:])
    return "\n".join(kept)


def _after_delimiter(command: str, delimiter: str, position: int) -> int:
    """Where the line after the first line from ``position`` that is ``delimiter`` (blanks aside) starts;
    past the end when there is none. Each line is looked at once, whatever the delimiter is made of."""
    while (found := command.find(delimiter, position)) >= 0:
        start = max(command.rfind("\n", position, found) + 1, position)
        end = command.find("\n", found)
        end = len(command) if end < 0 else end
        if command[start:end].strip() == delimiter:
            return end + 1
        position = end + 1
    return len(command) + 1


def _unquote(match: re.Match[str]) -> str:
    single, double, escaped = match.groups()
    if single is not None:
        return single
    if double is not None:
        return _ESCAPED_IN_DOUBLE.sub(r"\1", double)
    return str(escaped)


def _unquoted(word: str) -> str:
    """A word as the shell passes it on: its quotes and escaping backslashes removed."""
    return _QUOTING.sub(_unquote, word) if _QUOTES.search(word) else word


def _tokens(text: str, cut: bool) -> list[tuple[str, str]]:
    """``(operator, "")`` or ``("", word)`` for each token of ``text`` (see ``split_words``)."""
    readable = _READABLE.match(text).end()  # type: ignore[union-attr]  # it matches the empty string
    if readable < len(text) and not cut:
        return []  # an unclosed quote, or a backslash at the end
    tokens = [(op, _unquoted(word)) for op, word in _TOKEN.findall(text, 0, readable) if op or word]
    if cut and tokens:
        tokens.pop()  # the cut (or an unclosed quote past it) may fall in the last word
    return tokens


def split_words(text: str, cut: bool = False) -> tuple[str, ...]:
    """The shell words of ``text`` exactly as ``shlex`` reads them here (POSIX, ``();<>|&`` and newline as
    punctuation, whitespace ``" \\t\\r"``, ``#`` not a comment), in linear time. An unclosed quote or a final
    backslash leaves no words (the shell would refuse the command too), unless ``cut`` says ``text`` is the
    start of a longer command: then the words before the unreadable part, less the last one."""
    return tuple(op or word for op, word in _tokens(text, cut))


@lru_cache(maxsize=8192)
def _cached_tokens(command: str) -> tuple[tuple[str, str], ...]:
    return tuple(_tokens(strip_heredocs(command), cut=False))


def _command_tokens(command: str) -> Sequence[tuple[str, str]]:
    """The tokens of ``command`` once its here-documents are dropped, on its first ``MAX_COMMAND``
    characters."""
    if len(command) <= CACHED:
        return _cached_tokens(command)
    text = strip_heredocs(command)
    return _tokens(text[:MAX_COMMAND], cut=len(text) > MAX_COMMAND)


def simple_commands(command: str) -> list[SimpleCommand]:
    """The simple commands of ``command``, in order, each a list of words without redirections (a quoted
    ``';'`` is a word, not an operator)."""
    commands = _Commands()
    tokens = iter(_command_tokens(command))
    for op, word in tokens:
        if not op:
            commands.current.append(word)
        elif _is_redirection(op):
            next(tokens, None)  # a redirection and its target: not a word of the command
            commands.drop_descriptor()
        else:
            commands.end()
    commands.end()
    return commands.found


def _is_redirection(operator: str) -> bool:
    return "<" in operator or ">" in operator


class _Commands:
    """The simple commands read so far, and the words of the one being read."""

    def __init__(self) -> None:
        self.found: list[SimpleCommand] = []
        self.current: SimpleCommand = []

    def drop_descriptor(self) -> None:
        """Drop the file descriptor a redirection names (the ``2`` of ``2>&1``)."""
        if self.current and self.current[-1].isdigit():
            self.current.pop()

    def end(self) -> None:
        """End the command being read, if it has a word."""
        if self.current:
            self.found.append(self.current)
            self.current = []


def _is_wrapper_argument(word: str) -> bool:
    """Whether a word after a wrapper is its own: an option, or a variable assignment (``env X=1``)."""
    return word.startswith("-") or _ASSIGNMENT.match(word) is not None


def _takes_value(wrapper: str, option: str) -> bool:
    """Whether a wrapper's option takes the next word as its value (``timeout -s KILL``)."""
    return wrapper in {"timeout", "nice", "sudo"} and option in {"-s", "--signal", "-k", "-n", "-u", "-g"}


def _skip_wrapper(words: SimpleCommand, at: int) -> int:
    """Where the words after the wrapper at ``at`` and its own options start (``timeout -s KILL 60 cmd``:
    at ``cmd``)."""
    wrapper, at = words[at].rsplit("/", 1)[-1], at + 1
    while at < len(words) and _is_wrapper_argument(words[at]):
        option, at = words[at], at + 1
        at += _takes_value(wrapper, option) and at < len(words)
    if wrapper == "timeout" and at < len(words):
        at += 1  # the duration
    return at


def program(words: SimpleCommand) -> tuple[str, SimpleCommand] | None:
    """The program a simple command runs (its base name) and its arguments; None when it runs none."""
    at = 0
    while at < len(words):
        head = words[at]
        if head in RESERVED or _ASSIGNMENT.match(head):
            at += 1
        elif head.rsplit("/", 1)[-1] in _WRAPPERS:
            at = _skip_wrapper(words, at)
        else:
            return head.rsplit("/", 1)[-1], words[at + 1 :]
    return None


def invocations(command: str) -> list[tuple[str, SimpleCommand]]:
    """Every program ``command`` runs with its arguments, in order, including those of a command
    substitution left inside a quoted word (``"$(pgrep -f x)"``) and of ``bash -c STRING``."""
    found = _invocations(command) if len(command) <= CACHED else _parse_invocations(command)
    return [(name, list(args)) for name, args in found]


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
            found += _shell_string(*run)
        found += _substituted(words)
    return found


def _shell_string(name: str, args: SimpleCommand) -> list[tuple[str, SimpleCommand]]:
    """The invocations of the string a shell runs with ``-c``; none for any other program."""
    if name in _SHELLS and "-c" in args[:-1]:
        return invocations(args[args.index("-c") + 1])
    return []


def _substituted(words: SimpleCommand) -> list[tuple[str, SimpleCommand]]:
    """The invocations of the command substitutions left inside the words (``"$(pgrep -f x)"``)."""
    found: list[tuple[str, SimpleCommand]] = []
    for word in words:
        for inner in _SUBSTITUTION.findall(word) if "$(" in word else ():
            found += invocations(inner)
    return found
