"""Tokens of the dialect, each with the line and column it starts at.

Comments (``// line`` and ``/* block */``) are skipped, but the text of the first block comment that
comes before any token is kept: it is the program's ``/* predicate */`` description.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from ouroboros_gates.miners.datalog.errors import ParseError
from ouroboros_gates.miners.datalog.syntax import Value

__all__ = ["Kind", "Token", "tokenize"]


class Kind(Enum):
    """The kinds of token."""

    NAME = "a name"
    VARIABLE = "a variable"
    ANONYMOUS = "'_'"
    STRING = "a string"
    NUMBER = "a number"
    LPAREN = "'('"
    RPAREN = "')'"
    COMMA = "','"
    DOT = "'.'"
    IF = "':-'"
    BANG = "'!'"
    COLON = "':'"
    EQUALS = "'='"  # no clause has one: read so that Soufflé's `.output p(IO=file)` gets a clear refusal
    END = "end of input"


@dataclass(frozen=True, slots=True)
class Token:
    """One token: its kind, its source text, its value for strings and numbers, and where it starts."""

    kind: Kind
    text: str
    value: Value | None
    line: int
    column: int


_PUNCTUATION = {"(": Kind.LPAREN, ")": Kind.RPAREN, ",": Kind.COMMA, "!": Kind.BANG, "=": Kind.EQUALS}
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_STRING_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r"}


class _Scanner:
    """A cursor over the text that knows its line and column."""

    def __init__(self, text: str, file: str) -> None:
        self.text = text
        self.file = file
        self.offset = 0
        self.line = 1
        self.line_start = 0
        self.leading_comment: str | None = None
        self.seen_token = False

    @property
    def column(self) -> int:
        return self.offset - self.line_start + 1

    def error(self, message: str, line: int | None = None, column: int | None = None) -> ParseError:
        return ParseError(self.file, line or self.line, column or self.column, message)

    def advance(self, count: int) -> None:
        """Move forward ``count`` characters, keeping line and column right across newlines."""
        end = self.offset + count
        newline = self.text.rfind("\n", self.offset, end)
        if newline >= 0:
            self.line += self.text.count("\n", self.offset, end)
            self.line_start = newline + 1
        self.offset = end

    def skip_blank(self) -> None:
        """Skip whitespace and comments."""
        text = self.text
        while self.offset < len(text):
            char = text[self.offset]
            if char in " \t\r\n\f":
                self.advance(1)
            elif text.startswith("//", self.offset):
                end = text.find("\n", self.offset)
                self.advance((len(text) if end < 0 else end) - self.offset)
            elif text.startswith("/*", self.offset):
                self.block_comment()
            else:
                return

    def block_comment(self) -> None:
        end = self.text.find("*/", self.offset + 2)
        if end < 0:
            raise self.error("unterminated block comment")
        if self.leading_comment is None and not self.seen_token:
            self.leading_comment = self.text[self.offset + 2 : end].strip()
        self.advance(end + 2 - self.offset)

    def string(self) -> Token:
        """A double-quoted string; the scanner stands on its opening quote."""
        line, column, start = self.line, self.column, self.offset
        chars: list[str] = []
        self.advance(1)
        while True:
            if self.offset >= len(self.text) or self.text[self.offset] == "\n":
                raise self.error("unterminated string", line, column)
            char = self.text[self.offset]
            if char == '"':
                self.advance(1)
                return Token(Kind.STRING, self.text[start : self.offset], "".join(chars), line, column)
            if char == "\\":
                escaped = self.text[self.offset + 1 : self.offset + 2]
                if escaped not in _STRING_ESCAPES:
                    raise self.error(f"unknown escape '\\{escaped}' in string")
                chars.append(_STRING_ESCAPES[escaped])
                self.advance(2)
            else:
                chars.append(char)
                self.advance(1)

    def word(self, match: re.Match[str]) -> Token:
        text = match.group()
        if text == "_":
            kind = Kind.ANONYMOUS
        elif text[0] == "_":
            raise self.error(f"'{text}': a variable starts with an upper-case letter; '_' alone is anonymous")
        else:
            kind = Kind.VARIABLE if text[0].isupper() else Kind.NAME
        return self.take(kind, len(text))

    def number(self, match: re.Match[str]) -> Token:
        text = match.group()
        value: Value = int(text) if match.group(1) is None and match.group(2) is None else float(text)
        return self.take(kind=Kind.NUMBER, length=len(text), value=value)

    def take(self, kind: Kind, length: int, value: Value | None = None) -> Token:
        token = Token(kind, self.text[self.offset : self.offset + length], value, self.line, self.column)
        self.advance(length)
        return token

    def token(self) -> Token:
        """The next token (``END`` at the end of the text)."""
        self.skip_blank()
        if self.offset >= len(self.text):
            return Token(Kind.END, "", None, self.line, self.column)
        self.seen_token = True
        text, offset = self.text, self.offset
        char = text[offset]
        if char in _PUNCTUATION:
            return self.take(_PUNCTUATION[char], 1)
        if char == '"':
            return self.string()
        if text.startswith(":-", offset):
            return self.take(Kind.IF, 2)
        if char == ":":
            return self.take(Kind.COLON, 1)
        if char == ".":
            return self.take(Kind.DOT, 1)
        if (word := _WORD.match(text, offset)) is not None:
            return self.word(word)
        if (number := _NUMBER.match(text, offset)) is not None:
            return self.number(number)
        raise self.error(f"unexpected character {char!r}")


def tokenize(text: str, file: str = "<string>") -> tuple[list[Token], str | None]:
    """The tokens of ``text`` (ending with one ``END``) and the leading block comment's text."""
    scanner = _Scanner(text, file)
    tokens: list[Token] = []
    while True:
        token = scanner.token()
        tokens.append(token)
        if token.kind is Kind.END:
            return tokens, scanner.leading_comment
