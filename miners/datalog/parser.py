"""The parser: dialect text to a ``Program``.

    program     := (declaration | directive | clause)*
    declaration := ".decl" name "(" [attribute ("," attribute)*] ")"      attribute := name ":" type
    directive   := (".input" | ".output") name ("," name)*
    clause      := atom [":-" literal ("," literal)*] "."
    literal     := "!" atom | atom                 (an atom named gt ge lt le eq ne is a comparison)
    atom        := name ["(" [term ("," term)*] ")"]
    term        := Variable | "_" | "string" | number

A clause without a body and without variables is a fact; one with variables stays a rule, so the
checker can name its unbound head variables instead of the parser guessing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from ouroboros_gates.miners.datalog.errors import ParseError
from ouroboros_gates.miners.datalog.lexer import Kind, Token, tokenize
from ouroboros_gates.miners.datalog.syntax import (
    BUILTINS,
    Atom,
    Comparison,
    Constant,
    Declaration,
    Directive,
    Fact,
    Literal,
    Location,
    Negation,
    Program,
    Rule,
    Term,
    Variable,
)

__all__ = ["DIRECTIVES", "TYPES", "parse"]

_Item = TypeVar("_Item")

DIRECTIVES = ("decl", "input", "output")
"""The words a ``.`` may start: a declaration, or Soufflé's input and output directives."""

TYPES = ("symbol", "number")
"""The argument types a ``.decl`` may name: strings, and numbers (ints and floats)."""


def parse(text: str, file: str = "<string>") -> Program:
    """Parse ``text``; ``file`` names it in locations and errors. Raises ``ParseError``."""
    tokens, predicate_doc = tokenize(text, file)
    return _Parser(tokens, file).program(predicate_doc)


def _describe(token: Token) -> str:
    return "end of input" if token.kind is Kind.END else repr(token.text)


class _Parser:
    """Recursive descent over the token list."""

    def __init__(self, tokens: list[Token], file: str) -> None:
        self.tokens = tokens
        self.file = file
        self.position = 0

    def peek(self) -> Token:
        return self.tokens[self.position]

    def next(self) -> Token:
        token = self.tokens[self.position]
        if token.kind is not Kind.END:
            self.position += 1
        return token

    def error(self, token: Token, message: str) -> ParseError:
        return ParseError(self.file, token.line, token.column, message)

    def expect(self, kind: Kind, what: str) -> Token:
        token = self.next()
        if token.kind is not kind:
            raise self.error(token, f"expected {what}, found {_describe(token)}")
        return token

    def location(self, token: Token) -> Location:
        return Location(self.file, token.line, token.column)

    def program(self, predicate_doc: str | None) -> Program:
        rules: list[Rule] = []
        facts: list[Fact] = []
        declarations: list[Declaration] = []
        directives: list[Directive] = []
        while self.peek().kind is not Kind.END:
            if self.peek().kind is Kind.DOT:
                dot, word = self.directive_word()
                if word.text == "decl":
                    declarations.append(self.declaration(dot))
                else:
                    directives += self.directive(dot, word.text)
                continue
            clause = self.clause(len(rules))
            if isinstance(clause, Rule):
                rules.append(clause)
            else:
                facts.append(clause)
        return Program(
            self.file, tuple(rules), tuple(facts), tuple(declarations), predicate_doc, tuple(directives)
        )

    def directive_word(self) -> tuple[Token, Token]:
        """The ``.`` and the word right after it: ``decl``, ``input`` or ``output``."""
        dot = self.next()
        word = self.next()
        adjacent = word.line == dot.line and word.column == dot.column + 1
        if word.kind is not Kind.NAME or not adjacent:
            raise self.error(dot, f"expected a clause, found {_describe(dot)}")
        if word.text not in DIRECTIVES:
            raise self.error(dot, f"unsupported directive .{word.text} (known: .decl, .input, .output)")
        return dot, word

    def directive(self, dot: Token, kind: str) -> list[Directive]:
        """``.input`` or ``.output`` and the predicates it names (Soufflé's I/O parameters are refused:
        ``ouro datalog run`` reads JSON-lines facts and chooses the output with ``--format``/``--out``)."""
        found = []
        while True:
            name = self.expect(Kind.NAME, f"a predicate name after .{kind}")
            found.append(Directive(kind, name.text, self.location(name)))
            if self.peek().kind is Kind.LPAREN:
                raise self.error(
                    self.peek(),
                    f"parameters of .{kind} are not supported (the command line's "
                    "--format and --out choose the output; facts come as JSON lines)",
                )
            if self.peek().kind is not Kind.COMMA:
                return found
            self.next()

    def declaration(self, dot: Token) -> Declaration:
        name = self.expect(Kind.NAME, "a predicate name after .decl")
        self.expect(Kind.LPAREN, f"'(' after .decl {name.text}")
        attributes = self.separated(self.attribute) if self.peek().kind is not Kind.RPAREN else []
        self.expect(Kind.RPAREN, f"',' or ')' in .decl {name.text}")
        return Declaration(name.text, tuple(attributes), self.location(dot))

    def attribute(self) -> tuple[str, str]:
        name = self.next()
        if name.kind not in (Kind.NAME, Kind.VARIABLE):
            raise self.error(name, f"expected an attribute name, found {_describe(name)}")
        self.expect(Kind.COLON, f"':' after attribute {name.text}")
        kind = self.expect(Kind.NAME, f"a type for attribute {name.text}")
        if kind.text not in TYPES:
            raise self.error(kind, f"unknown type {kind.text!r} (expected {' or '.join(TYPES)})")
        return name.text, kind.text

    def clause(self, index: int) -> Rule | Fact:
        start = self.peek()
        head = self.atom()
        if head.predicate in BUILTINS:
            raise self.error(start, f"builtin {head.predicate} cannot be defined by a clause")
        body = self.body()
        self.end_of_clause(head, body)
        if not body and all(isinstance(term, Constant) for term in head.terms):
            return Fact(head)
        return Rule(index, head, tuple(body), head.location)

    def body(self) -> list[Literal]:
        """The literals after ``:-``; none when the clause has no ``:-``."""
        if self.peek().kind is not Kind.IF:
            return []
        self.next()
        return self.separated(self.literal)

    def separated(self, item: Callable[[], _Item]) -> list[_Item]:
        """One item or more, separated by commas."""
        found = [item()]
        while self.peek().kind is Kind.COMMA:
            self.next()
            found.append(item())
        return found

    def end_of_clause(self, head: Atom, body: list[Literal]) -> None:
        """The ``.`` that ends a clause."""
        end = self.next()
        if end.kind is not Kind.DOT:
            expected = "',' or '.'" if body else "':-' or '.'"
            raise self.error(
                end, f"expected {expected} after {body[-1] if body else head}, found {_describe(end)}"
            )

    def literal(self) -> Literal:
        if self.peek().kind is Kind.BANG:
            return self.negation()
        atom = self.atom()
        if atom.predicate not in BUILTINS:
            return atom
        return self.comparison(atom)

    def negation(self) -> Negation:
        bang = self.next()
        atom = self.atom()
        if atom.predicate in BUILTINS:
            raise self.error(bang, f"builtin {atom.predicate} cannot be negated: use the opposite comparison")
        return Negation(atom)

    def comparison(self, atom: Atom) -> Comparison:
        """A builtin atom as the comparison it writes; it takes two arguments."""
        if atom.arity != 2:
            raise ParseError(
                self.file,
                atom.location.line,
                atom.location.column,
                f"builtin {atom.predicate} takes 2 arguments, found {atom.arity}",
            )
        return Comparison(atom.predicate, atom.terms[0], atom.terms[1], atom.location)

    def atom(self) -> Atom:
        name = self.expect(Kind.NAME, "a predicate name")
        terms: list[Term] = []
        if self.peek().kind is Kind.LPAREN:
            self.next()
            if self.peek().kind is not Kind.RPAREN:
                terms = self.separated(self.term)
            self.expect(Kind.RPAREN, f"',' or ')' in the arguments of {name.text}")
        return Atom(name.text, tuple(terms), self.location(name))

    def term(self) -> Term:
        token = self.next()
        if token.kind in (Kind.VARIABLE, Kind.ANONYMOUS):
            return Variable(token.text)
        if token.kind in (Kind.STRING, Kind.NUMBER) and token.value is not None:
            return Constant(token.value)
        raise self.error(token, f"expected a term, found {_describe(token)}")
