"""The parser: what it builds, what it keeps (the predicate comment), and where it says text is wrong."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ouroboros_gates.miners.datalog import (
    Atom,
    Comparison,
    Constant,
    Declaration,
    Negation,
    ParseError,
    Variable,
    parse,
)
from ouroboros_gates.miners.datalog.syntax import format_value

TEMPLATE = """\
/* predicate
   invisible(R): run R stayed without a draft pull request for longer than the knee. */
// thresholds read knee(K)
invisible(R) :- gated(R), score(R, S), knee(K), gt(S, K).
"""


def test_a_rule_becomes_head_and_body_literals_in_written_order() -> None:
    program = parse('head(X, Y) :- a(X, Z), !b(Z), score(X, S), knee(K), gt(S, K), eq(Y, "c").', "r.dl")
    (rule,) = program.rules
    assert rule.head == Atom("head", (Variable("X"), Variable("Y")), rule.head.location)
    assert [type(literal) for literal in rule.body] == [Atom, Negation, Atom, Atom, Comparison, Comparison]
    assert rule.body[4] == Comparison("gt", Variable("S"), Variable("K"), rule.body[4].location)
    assert str(rule) == 'head(X, Y) :- a(X, Z), !b(Z), score(X, S), knee(K), gt(S, K), eq(Y, "c").'
    assert (rule.location.file, rule.location.line, rule.location.column) == ("r.dl", 1, 1)


def test_facts_are_ground_clauses_and_keep_their_line() -> None:
    program = parse('edge("a", 1).\n\nedge("b", -2.5).\nflag.\nnone().\n', "f.dl")
    assert [fact.args for fact in program.facts] == [("a", 1), ("b", -2.5), (), ()]
    assert [fact.atom.location.line for fact in program.facts] == [1, 3, 4, 5]
    assert program.rules == ()


def test_a_bodiless_clause_with_variables_stays_a_rule_for_the_checker_to_refuse() -> None:
    program = parse("p(X).")
    assert program.facts == ()
    assert len(program.rules) == 1 and program.rules[0].body == ()


@pytest.mark.parametrize(
    ("source", "value"),
    [
        ("0", 0),
        ("-17", -17),
        ("3.25", 3.25),
        ("-1.5e3", -1500.0),
        ("2E-2", 0.02),
        ('""', ""),
        ('"plain"', "plain"),
        ('"q\\"uote\\\\back\\nline\\ttab\\rret"', 'q"uote\\back\nline\ttab\rret'),
        ('"ünï // not a comment /* nor this */"', "ünï // not a comment /* nor this */"),
    ],
)
def test_constants(source: str, value: object) -> None:
    (fact,) = parse(f"c({source}).").facts
    assert fact.args == (value,)
    assert type(fact.args[0]) is type(value)


def test_anonymous_variables_and_zero_arity_atoms() -> None:
    (rule,) = parse("p :- q(_, X), !r(X, _), s, t().").rules
    assert rule.body[0] == Atom("q", (Variable("_"), Variable("X")), rule.body[0].location)
    assert Variable("_").anonymous and not Variable("X").anonymous
    assert [atom.arity for atom in (rule.head, rule.body[2], rule.body[3]) if isinstance(atom, Atom)] == [
        0,
        0,
        0,
    ]


def test_the_first_block_comment_before_any_clause_is_the_predicate_doc() -> None:
    program = parse(TEMPLATE, "rules.dl")
    assert program.predicate_doc == (
        "predicate\n   invisible(R): run R stayed without a draft pull request for longer than the knee."
    )
    assert parse("// only a line comment\np(1).").predicate_doc is None
    assert parse("p(1). /* a later block comment is not the description */").predicate_doc is None
    assert parse("// header\n/* predicate p */ /* second */ p(1).").predicate_doc == "predicate p"


def test_comments_are_skipped_everywhere() -> None:
    program = parse("p(X) :- /* inline */ q(X), // trailing\n r(X). /* multi\nline */ s(1).")
    assert str(program.rules[0]) == "p(X) :- q(X), r(X)."
    assert program.facts[0].atom.location.line == 3


def test_declarations_give_arity_and_types() -> None:
    program = parse('.decl edge(from: symbol, To: number)\n.decl flag()\nedge("a", 1).')
    assert program.declarations == (
        Declaration("edge", (("from", "symbol"), ("To", "number")), program.declarations[0].location),
        Declaration("flag", (), program.declarations[1].location),
    )
    assert program.declarations[0].location.line == 1 and program.declarations[1].location.line == 2


def test_rendering_round_trips() -> None:
    program = parse(TEMPLATE + '.decl knee(k: number)\nknee(468).\nname("a\\"b").\n', "rules.dl")
    assert parse(str(program), "rules.dl") == program


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("p(X) :- q(X)", "x.dl:1:13: expected ',' or '.' after q(X), found end of input"),
        ("p(X) :- q(X) r(X).", "x.dl:1:14: expected ',' or '.' after q(X), found 'r'"),
        ("p(X)", "x.dl:1:5: expected ':-' or '.' after p(X), found end of input"),
        ("p(X) :- .", "x.dl:1:9: expected a predicate name, found '.'"),
        ("p(X) :- q(X,).", "x.dl:1:13: expected a term, found ')'"),
        ("p(X) :- q(X.", "x.dl:1:12: expected ',' or ')' in the arguments of q, found '.'"),
        ('p("abc).', "x.dl:1:3: unterminated string"),
        ('p("a\nb").', "x.dl:1:3: unterminated string"),
        ('p("a\\qb").', "x.dl:1:5: unknown escape '\\q' in string"),
        ("p(X) :- q(X) & r(X).", "x.dl:1:14: unexpected character '&'"),
        (
            "p(_x) :- q(_x).",
            "x.dl:1:3: '_x': a variable starts with an upper-case letter; '_' alone is anonymous",
        ),
        ("p(1).\n/* never closed", "x.dl:2:1: unterminated block comment"),
        ("gt(X, Y) :- p(X, Y).", "x.dl:1:1: builtin gt cannot be defined by a clause"),
        ("p(X) :- q(X), !gt(X, 1).", "x.dl:1:15: builtin gt cannot be negated: use the opposite comparison"),
        ("p(X) :- q(X), lt(X).", "x.dl:1:15: builtin lt takes 2 arguments, found 1"),
        (".printsize edge", "x.dl:1:1: unsupported directive .printsize (known: .decl, .input, .output)"),
        (
            ".output p(IO=stdout)",
            "x.dl:1:10: parameters of .output are not supported (the command line's --format and --out "
            "choose "
            "the output; facts come as JSON lines)",
        ),
        (".decl p(x: text)", "x.dl:1:12: unknown type 'text' (expected symbol or number)"),
        (".decl p(x symbol)", "x.dl:1:11: expected ':' after attribute x, found 'symbol'"),
        (". decl p(x: symbol)", "x.dl:1:1: expected a clause, found '.'"),
        ("P(X) :- q(X).", "x.dl:1:1: expected a predicate name, found 'P'"),
        ("p(X) :-\n  q(X),\n    r(X)\n  s(X).", "x.dl:4:3: expected ',' or '.' after r(X), found 's'"),
    ],
)
def test_errors_name_file_line_and_column(source: str, message: str) -> None:
    with pytest.raises(ParseError) as caught:
        parse(source, "x.dl")
    assert str(caught.value) == message
    assert (caught.value.file, caught.value.line) == ("x.dl", int(message.split(":")[1]))


def test_the_default_file_name() -> None:
    with pytest.raises(ParseError, match=r"^<string>:1:1: "):
        parse(")")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_any_string_constant_round_trips_through_its_rendering(text: str) -> None:
    (fact,) = parse(f"s({format_value(text)}).").facts
    assert fact.args == (text,)


@settings(max_examples=100, deadline=None)
@given(st.one_of(st.integers(-(10**20), 10**20), st.floats(allow_nan=False, allow_infinity=False)))
def test_any_finite_number_round_trips_through_its_rendering(number: float) -> None:
    (fact,) = parse(f"n({format_value(number)}).").facts
    assert fact.args == (number,)
    assert type(fact.args[0]) is type(number)
    assert Constant(number) == fact.atom.terms[0]
