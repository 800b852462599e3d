"""The package's public surface, pinned, and its purity: the engine imports the standard library only."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from ouroboros_gates.miners import datalog as miners_datalog

PACKAGE = Path(miners_datalog.__file__).parent


def _isort_key(name: str) -> tuple[int, str]:
    """Constants, then classes, then functions, each alphabetical (ruff's RUF022 order)."""
    return (0 if name.isupper() else 1 if name[0].isupper() else 2), name


def test_the_public_surface_is_pinned_and_sorted() -> None:
    assert miners_datalog.__all__ == sorted(miners_datalog.__all__, key=_isort_key)
    assert miners_datalog.__all__ == [
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
    for name in miners_datalog.__all__:
        assert getattr(miners_datalog, name) is not None


def test_the_error_tree() -> None:
    from ouroboros_gates.miners.datalog import errors

    contract = (
        errors.UnsafeRuleError,
        errors.UnstratifiedError,
        errors.ArityError,
        errors.DeclarationError,
        errors.FactError,
        errors.UndefinedPredicateError,
    )
    assert all(issubclass(error, errors.ContractError) for error in contract)
    assert issubclass(errors.ContractError, errors.DatalogError)
    assert issubclass(errors.ParseError, errors.DatalogError)
    assert issubclass(errors.UnknownFactError, errors.DatalogError)
    assert issubclass(errors.UnknownFactError, LookupError)
    assert str(errors.ContractError("no place")) == "no place"
    assert str(errors.UnsafeRuleError("m", "r.dl", 4)) == "r.dl:4: m"


def _imported_modules(path: Path) -> set[str]:
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            modules.add(node.module)
    return modules


def test_the_engine_imports_nothing_but_the_standard_library_and_itself() -> None:
    sources = sorted(PACKAGE.glob("*.py"))
    assert len(sources) >= 10
    for source in sources:
        for module in _imported_modules(source):
            top = module.split(".")[0]
            assert top in sys.stdlib_module_names or module.startswith("ouroboros_gates.miners.datalog"), (
                source.name,
                module,
            )
