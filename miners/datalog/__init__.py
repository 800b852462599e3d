"""A Soufflé-like Datalog engine with proofs: ``parse`` → ``check`` → ``evaluate``.

    program = parse(text, file="rules.dl")        # Program, or ParseError
    checked = check(program)                      # CheckedProgram: safe, stratified, or ContractError
    check_defined(checked, given_predicates)      # every predicate a rule reads has a source
    model = evaluate(checked, facts)              # Model: facts(pred), proof(pred, args)
    explain(model, checked.rules, atom)           # the atom's proof, or WhyNot: the literal that fails

Stratified programs are evaluated bottom-up, semi-naively, with join plans compiled to Python and
hash indexes on bound argument positions. Every fact keeps the first derivation found, from which
``Model.proof`` builds a tree whose leaves are the extensional facts with the spans they came with.
Pure: the standard library only.
"""

from __future__ import annotations

from ouroboros_gates.miners.datalog.check import CheckedProgram, CheckedRule, check, check_defined
from ouroboros_gates.miners.datalog.engine import InputFact, evaluate
from ouroboros_gates.miners.datalog.errors import (
    ArityError,
    ContractError,
    DatalogError,
    DeclarationError,
    FactError,
    ParseError,
    ProofsNotKeptError,
    UndefinedPredicateError,
    UnknownFactError,
    UnsafeRuleError,
    UnstratifiedError,
)
from ouroboros_gates.miners.datalog.explain import Attempt, WhyNot, explain
from ouroboros_gates.miners.datalog.model import Binding, Condition, GroundAtom, Model, ProofNode
from ouroboros_gates.miners.datalog.parser import parse
from ouroboros_gates.miners.datalog.strata import Stratum
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
    Value,
    Variable,
)

__all__ = [
    "BUILTINS",
    "ArityError",
    "Atom",
    "Attempt",
    "Binding",
    "CheckedProgram",
    "CheckedRule",
    "Comparison",
    "Condition",
    "Constant",
    "ContractError",
    "DatalogError",
    "Declaration",
    "DeclarationError",
    "Directive",
    "Fact",
    "FactError",
    "GroundAtom",
    "InputFact",
    "Literal",
    "Location",
    "Model",
    "Negation",
    "ParseError",
    "Program",
    "ProofNode",
    "ProofsNotKeptError",
    "Rule",
    "Stratum",
    "Term",
    "UndefinedPredicateError",
    "UnknownFactError",
    "UnsafeRuleError",
    "UnstratifiedError",
    "Value",
    "Variable",
    "WhyNot",
    "check",
    "check_defined",
    "evaluate",
    "explain",
    "parse",
]
