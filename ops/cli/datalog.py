"""``ouro datalog``: the Datalog engine from the command line, for analysis authors (no broker, no log).

    ouro datalog check RULES                          a summary, or file:line:col: message (exit 2)
    ouro datalog run RULES FACTS… [--output P]… [--format jsonl|tsv|csv] [--out DIR] [--no-proofs] [--trees]
                                                      the output relations (--output, else the rules'
                                                      .output directives, else every derived predicate):
                                                      JSON lines with each atom's proof (its last step:
                                                      the rule and its premises; or the whole tree with
                                                      --trees), or without; or
                                                      TSV/CSV rows; on stdout, or one file per relation
                                                      in DIR (P.jsonl, P.tsv, P.csv)
    ouro datalog explain RULES FACTS… ATOM [--depth N] [--json]
                                                      ATOM's proof tree (leaves: input facts with their
                                                      spans), or why it does not hold

FACTS are JSON-lines files of facts (``{"predicate": …, "args": […], "span": …}``). A line that is not a fact,
a fact of the wrong arity, a predicate read but never defined or an output relation that is none: file:line or
the option named, exit 2.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, BinaryIO

import typer

if TYPE_CHECKING:
    from ouroboros_gates.miners import OutputFormat, Rules
    from ouroboros_gates.miners.datalog import Fact, GroundAtom, InputFact, Model
    from ouroboros_gates.miners.relations import Proofs

__all__ = ["datalog_app"]

datalog_app = typer.Typer(
    no_args_is_help=True, help="The Datalog engine: check a rules file, run it over facts."
)

RulesArg = Annotated[Path, typer.Argument(metavar="RULES", help="A .dl file.")]
FactsArg = Annotated[list[Path], typer.Argument(metavar="FACTS...", help="JSON-lines files of facts.")]


def _checked(rules: Path) -> Rules:
    """The rules, or their one error line ``file:line:col: message`` on stderr and exit 2."""
    from ouroboros_gates.miners import RulesError, check_rules

    try:
        return check_rules(rules, require_doc=False)
    except RulesError as exc:
        print(exc, file=sys.stderr)
        raise SystemExit(2) from None


@datalog_app.command("check")
def datalog_check(rules: RulesArg) -> None:
    """Parse and check RULES (safety, stratification, arities): a summary, or one error line and exit 2."""
    from ouroboros_gates.miners import derived_predicates

    checked = _checked(rules)
    program = checked.program
    derived = derived_predicates(program)
    outputs = program.directed("output")
    print(
        f"{rules}: ok: {len(program.rules)} rule(s), {len(program.facts)} fact(s), "
        f"{len(checked.checked.strata)} stratum(s); derived: {_listed(derived)}; "
        f"input: {_listed(p for p in checked.checked.arities if p not in derived)}; "
        + (f"output: {', '.join(outputs)}; " if outputs else "")
        + f"/* predicate */ block: {'yes' if checked.doc.strip() else 'no'}"
    )


def _listed(predicates: Iterable[str]) -> str:
    """Predicates as a comma-separated list, ``none`` when there are none."""
    return ", ".join(predicates) or "none"


def _read_facts(paths: list[Path], arities: dict[str, int]) -> list[InputFact]:
    """Every fact of the files; ``FactsError`` naming file:line at the first line that is not a fact
    or a fact whose arity disagrees with the rules or with an earlier fact."""
    given: list[InputFact] = []
    for path in paths:
        for item in _facts_in(path):
            _check_arity(item, arities, path)
            given.append(item)
    return given


def _facts_in(path: Path) -> Iterator[InputFact]:
    """The facts of one file, read lazily; ``FactsError`` naming file:line at a line that is not a fact."""
    from ouroboros_gates.miners import FactLineProblem, FactsError, MinerUsageError
    from ouroboros_gates.miners.facts import read_input_facts

    if not path.is_file():
        raise MinerUsageError(f"{path}: no such facts file")
    for item in read_input_facts(path):
        if isinstance(item, FactLineProblem):
            raise FactsError(str(item))
        yield item


def _check_arity(fact: InputFact, arities: dict[str, int], path: Path) -> None:
    """``FactsError`` when the fact's arity disagrees with the rules or an earlier fact (the first one read
    sets an undeclared predicate's arity)."""
    from ouroboros_gates.miners import FactsError
    from ouroboros_gates.miners.facts import to_span

    predicate, args, span = fact
    if arities.setdefault(predicate, len(args)) != len(args):
        where = f"{s.file}:{s.line}" if (s := to_span(span)) else str(path)
        raise FactsError(
            f"{where}: {predicate} takes {arities[predicate]} argument(s), this fact has {len(args)}"
        )


def _input(rules: Path, facts: list[Path]) -> tuple[Rules, list[InputFact]]:
    """RULES checked and FACTS read; a predicate read but never defined is one line and exit 2."""
    from ouroboros_gates.miners import RulesError, check_sources

    checked = _checked(rules)
    given = _read_facts(facts, dict(checked.checked.arities))
    try:
        check_sources(checked, {predicate for predicate, _args, _span in given})
    except RulesError as exc:
        print(exc, file=sys.stderr)
        raise SystemExit(2) from None
    return checked, given


def _outputs(checked: Rules, asked: list[str] | None, given: list[InputFact]) -> tuple[str, ...]:
    """The relations to write: ``--output``, else the rules' ``.output``, else every derived predicate."""
    from ouroboros_gates.miners import derived_predicates

    chosen = tuple(dict.fromkeys(asked or ())) or checked.program.directed("output")
    _check_known(chosen, checked, given)
    return chosen or derived_predicates(checked.program)


def _check_known(chosen: tuple[str, ...], checked: Rules, given: list[InputFact]) -> None:
    """A usage error at the first relation asked for that neither the rules nor the facts have."""
    from ouroboros_gates.miners import MinerUsageError

    known = set(checked.checked.arities).union(predicate for predicate, _args, _span in given)
    for predicate in chosen:
        if predicate not in known:
            raise MinerUsageError(
                f"--output {predicate}: no predicate {predicate} in {checked.program.file} or the facts"
            )


@datalog_app.command("run")
def datalog_run(
    rules: RulesArg,
    facts: FactsArg,
    output: Annotated[
        list[str] | None,
        typer.Option(
            "--output", metavar="P", help="Write relation P (repeatable; default: the .output directives)."
        ),
    ] = None,
    form: Annotated[str, typer.Option("--format", help="jsonl (with proofs), tsv or csv.")] = "jsonl",
    out: Annotated[
        Path | None, typer.Option(help="Write one file per relation here (P.jsonl, P.tsv, P.csv).")
    ] = None,
    no_proofs: Annotated[
        bool, typer.Option("--no-proofs", help="JSON lines without proofs (and none kept).")
    ] = False,
    trees: Annotated[
        bool,
        typer.Option(
            "--trees", help="Each proof as its whole tree (its size grows with the derivation's depth)."
        ),
    ] = False,
) -> None:
    """Evaluate RULES over FACTS and write the output relations: JSON lines with each atom's proof (its last
    step: the rule and the premises it used; explain expands them) or, with --trees, the whole tree;
    --no-proofs without; --format tsv|csv as rows. Each relation in the order its facts were found; on
    stdout, or in --out DIR."""
    from ouroboros_gates.miners import MinerUsageError, OutputFormat, run_rules

    chosen_format, written = _format_and_proofs(form, no_proofs, trees)
    checked, given = _input(rules, facts)
    relations = _outputs(checked, output, given)
    if out is None and chosen_format is not OutputFormat.JSONL and len(relations) > 1:
        raise MinerUsageError(f"{len(relations)} relations as {form} need --out DIR (one file each)")
    model = run_rules(checked, given, proofs=_derivations_kept(written, relations))
    _write(model, relations, chosen_format, written, out)


def _derivations_kept(written: Proofs, relations: tuple[str, ...]) -> bool | tuple[str, ...]:
    """The derivations to keep: a last step needs those of the relations written only; a whole tree, every
    one; no proof, none."""
    return True if written == "tree" else (relations if written == "step" else False)


def _format_and_proofs(form: str, no_proofs: bool, trees: bool) -> tuple[OutputFormat, Proofs]:
    """The output format, and the proofs written: whole trees, last steps, or none (only JSON lines carry
    them)."""
    from ouroboros_gates.miners import MinerUsageError, OutputFormat

    chosen_format = _output_format(form)
    if (no_proofs or chosen_format is not OutputFormat.JSONL) and trees:
        raise MinerUsageError("--trees writes proofs: it goes with --format jsonl and without --no-proofs")
    return chosen_format, _proofs_written(chosen_format, no_proofs, trees)


def _output_format(form: str) -> OutputFormat:
    """``--format`` as an output format, or a usage error listing the three."""
    from ouroboros_gates.miners import MinerUsageError, OutputFormat

    try:
        return OutputFormat(form)
    except ValueError:
        raise MinerUsageError(f"--format {form}: one of jsonl, tsv, csv") from None


def _proofs_written(chosen_format: OutputFormat, no_proofs: bool, trees: bool) -> Proofs:
    """Whole trees, last steps (JSON lines without ``--no-proofs``), or none."""
    from ouroboros_gates.miners import OutputFormat

    proofs = chosen_format is OutputFormat.JSONL and not no_proofs
    return "tree" if trees else ("step" if proofs else "none")


def _write(
    model: Model, relations: tuple[str, ...], form: OutputFormat, proofs: Proofs, out: Path | None
) -> None:
    from ouroboros_gates.miners import write_relation

    if out is None:
        sys.stdout.flush()
        for predicate in relations:
            write_relation(model, predicate, sys.stdout.buffer, form, proofs)
        sys.stdout.buffer.flush()
        return
    out.mkdir(parents=True, exist_ok=True)
    for predicate in relations:
        handle: BinaryIO
        with (out / f"{predicate}{form.suffix}").open("wb", buffering=1 << 20) as handle:
            write_relation(model, predicate, handle, form, proofs)


@datalog_app.command("explain")
def datalog_explain(
    rules: RulesArg,
    facts: FactsArg,
    atom: Annotated[str, typer.Argument(metavar="ATOM", help='A ground atom, e.g. \'path("a", "c")\'.')],
    depth: Annotated[int | None, typer.Option(min=1, help="Expand the proof N steps below the atom.")] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="The proof as JSON (the nodes of `run --trees`).")
    ] = False,
) -> None:
    """Why ATOM holds (its proof tree: the rules used, leaves the input facts with their spans), or why it
    does not (no rule derives it, or the body literal that fails the nearest candidate binding); exit 1
    then."""
    import json

    from ouroboros_gates.miners import ProofJson, run_rules
    from ouroboros_gates.miners.datalog import ProofNode, explain

    checked, given = _input(rules, facts)
    model = run_rules(checked, given)
    found = explain(model, checked.checked.rules, _ground(atom, checked))
    if not isinstance(found, ProofNode):
        print(json.dumps({"holds": False, "why": str(found)}) if as_json else found)
        raise SystemExit(1)
    proof = found if depth is None else found.cut(depth)
    if as_json:
        print(json.dumps({"holds": True, "proof": ProofJson()(proof)}, ensure_ascii=False))
        return
    print(proof.render(_span_text))


def _span_text(span: object) -> str:
    """A leaf's span as ``file:line`` (``-`` for a fact given without one)."""
    from ouroboros_gates.miners.facts import to_span

    found = to_span(span)
    return "-" if found is None else f"{found.file}:{found.line}"


def _ground(text: str, checked: Rules) -> GroundAtom:
    """ATOM as a ground atom of the program's predicates, or a usage error naming what is wrong."""
    from ouroboros_gates.miners import MinerUsageError
    from ouroboros_gates.miners.datalog import Constant, GroundAtom

    fact = _one_fact(text)
    arity = checked.checked.arities.get(fact.atom.predicate)
    if arity is not None and arity != fact.atom.arity:
        raise MinerUsageError(f"ATOM {text!r}: {fact.atom.predicate} takes {arity} argument(s)")
    assert all(isinstance(t, Constant) for t in fact.atom.terms)
    return GroundAtom(fact.atom.predicate, fact.args)


def _one_fact(text: str) -> Fact:
    """ATOM parsed as a program of one fact, or a usage error: it does not parse, or is not one ground
    atom."""
    from ouroboros_gates.miners import MinerUsageError
    from ouroboros_gates.miners.datalog import ParseError, parse

    try:
        program = parse(f"{text.strip().removesuffix('.')}.", "ATOM")
    except ParseError as exc:
        raise MinerUsageError(f'ATOM {text!r}: {exc.message} (write it as in the rules: p("a", 1))') from None
    clauses = [*program.facts, *program.rules]
    if len(clauses) != 1 or program.rules:
        raise MinerUsageError(f"ATOM {text!r}: one ground atom (constants only: strings quoted, numbers)")
    return program.facts[0]
