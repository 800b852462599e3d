"""``ouro miner``: the miner contract from the command line (no broker, no log); ``ouro datalog`` is
``ops.cli.datalog``.

    ouro miner list [--json]                          every discovered miner: scope, verdicts, gate, origin
    ouro miner new NAME [--dir DIR]                   a new miner folder copied from _template, in DIR, else
                                                      the first OURO_MINERS_PATH folder, else miners/
    ouro miner test NAME [--write] [--json] [--runs ITEM…]
                                                      the miner test (exit 1 when a check fails); --runs: the
                                                      real runs a rule mutant must not change to be equivalent
    ouro miner NAME test [--write] [--json] [--runs ITEM…]   the same
    ouro miner NAME facts ITEM…                       extracted facts, JSON lines
    ouro miner NAME findings [--knee K] ITEM…         findings with proofs, JSON lines; without --knee a knee
                                                      miner uses the κ* its backtest fits on its fixtures
    ouro miner NAME backtest [--json] LABELS ITEM…    the walk-forward backtest block (or record)
    ouro miner NAME backtest ledger [--as-of T] [ITEM…]
                                                      the same on the labels (and, with no ITEM, the runs)
                                                      the event log had recorded by T
    ouro miner NAME mutate [--json] LABELS ITEM…      the mutation block (or report); a rule mutant is
                                                      equivalent only if no ITEM's verdicts change
    ouro miner NAME scope                             generic | tenant

NAME is a miner's ``NAME`` (``draft-pr-late``) or its folder (``_template``). ITEM is a run file, a run
directory, a directory of runs or a quoted glob (``'<state>/*/events.jsonl'``). Bad input is one
line on stderr and exit status 2. A verb whose report fails exits 1 with the failing row on stderr:
``test`` when a check fails, ``backtest`` when FN > 0 (or no knee could be fitted), ``mutate`` when the
mutation gate fails.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

from ouroboros_gates.ops.cli._miner_support import (
    fail,
    from_ledger,
    knee_of,
    miner_test_cmd,
    report_malformed,
    runs_given,
)

if TYPE_CHECKING:
    from ouroboros_gates.miners import CorpusItem, Labels, Miner

__all__ = ["miner_app"]

Items = Annotated[
    list[str], typer.Argument(metavar="ITEM...", help="Run files, run directories or quoted globs.")
]
WriteOption = Annotated[
    bool, typer.Option("--write", help="Regenerate backtest.md, mutation.md, README block.")
]
RunsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--runs",
        metavar="ITEM…",
        help="The miner's corpus (several values, or repeated): a rule mutant that changes a verdict on one "
        "is "
        "not equivalent.",
    ),
]
MoreRuns = Annotated[list[str] | None, typer.Argument(metavar="", hidden=True, show_default=False)]
LabelsArg = Annotated[Path, typer.Argument(metavar="LABELS", help="A labels.tsv file.")]
AsJson = Annotated[
    bool, typer.Option("--json", help="Print the record as JSON instead of the markdown block.")
]
JsonReport = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


def _test_verb(verbs: typer.Typer, miner: Miner) -> None:
    """``ouro miner NAME test``: the miner test, as ``ouro miner test NAME``."""

    @verbs.command("test")
    def test_verb(
        write: WriteOption = False,
        as_json: JsonReport = False,
        runs: RunsOption = None,
        more: MoreRuns = None,
    ) -> None:
        """The miner test (as `ouro miner test NAME`)."""
        miner_test_cmd(miner, write, as_json, runs_given(runs, more))


def _backtest_inputs(
    miner: str, labels: str, items: list[str] | None, as_of: str | None
) -> tuple[Labels, list[CorpusItem]]:
    """The labels and the runs ``backtest`` reads: the ledger's (``labels`` is ``ledger``), else the labels
    file's and the ITEMs given."""
    from ouroboros_gates.miners import MinerUsageError, corpus_items, read_labels

    if labels == "ledger":
        return from_ledger(miner, items, as_of)
    if as_of is not None or not items:
        raise MinerUsageError(
            "--as-of and an empty ITEM list go with LABELS = ledger; a labels file needs ITEM…"
        )
    return read_labels(Path(labels)), corpus_items(items)


def _verbs(name: str) -> TyperGroup:
    """The verbs of one miner, bound to it."""
    from ouroboros_gates.miners import DEFAULT_BLOCKS, find_miner

    miner = find_miner(name)
    verbs = typer.Typer(
        no_args_is_help=True, help=f"The verbs of the miner {miner.name} ({miner.folder.name})."
    )

    @verbs.command()
    def facts(items: Items) -> None:
        """Print the facts the extractor emits, one JSON line each, with their spans."""
        from ouroboros_gates.miners import compact_json, corpus_items, extract_facts

        found = corpus_items(items)
        for facts_of in extract_facts(miner, found).facts.values():
            for fact in facts_of:
                print(compact_json(fact))
        report_malformed(found, exit_on_unread=True)

    @verbs.command()
    def findings(
        items: Items,
        knee: Annotated[
            float | None,
            typer.Option(help="The knee K (default: the one the miner's backtest fits on its fixtures)."),
        ] = None,
    ) -> None:
        """Print the findings at knee K, one JSON line each, with the facts of their proofs."""
        from ouroboros_gates.miners import compact_json, corpus_items, extract_facts, find

        found = corpus_items(items)
        value = knee_of(miner) if knee is None else (int(knee) if knee.is_integer() else knee)
        for finding in find(miner, miner.rules(), extract_facts(miner, found), value):
            print(compact_json(finding))
        report_malformed(found, exit_on_unread=True)

    @verbs.command("backtest")
    def backtest_cmd(
        labels: Annotated[str, typer.Argument(metavar="LABELS", help="A labels.tsv file, or `ledger`.")],
        items: Annotated[
            list[str] | None,
            typer.Argument(metavar="[ITEM...]", help="Runs (default with ledger: the recorded ones)."),
        ] = None,
        as_json: AsJson = False,
        blocks: Annotated[int, typer.Option(help="PBO blocks S (even, at least 4).")] = DEFAULT_BLOCKS,
        as_of: Annotated[
            str | None,
            typer.Option(
                "--as-of", metavar="TIME", help="With `ledger`: what was recorded by TIME (ISO 8601)."
            ),
        ] = None,
    ) -> None:
        """Walk-forward backtest against LABELS (a labels.tsv, or the ledger's labels), with the PBO guard."""
        from ouroboros_gates.miners import backtest, compact_json, extract_facts

        judged, found = _backtest_inputs(miner.name, labels, items, as_of)
        extracted = extract_facts(miner, found)
        result = backtest(miner.name, miner.rules(), miner.verdicts, judged, extracted, blocks)
        print(compact_json(result.record()) if as_json else result.markdown(), end="\n" if as_json else "")
        report_malformed(found)
        if not result.missed_nothing:
            failing = [
                (name, value) for name, value in result.rows() if name == "Backtest FN" or "kappa" in name
            ]
            fail([f"| {name} | {value} |" for name, value in failing])

    @verbs.command("mutate")
    def mutate_cmd(labels: LabelsArg, items: Items, as_json: AsJson = False) -> None:
        """Mutation-test the miner's checks against LABELS."""
        from ouroboros_gates.miners import compact_json, corpus_items, extract_facts, mutate, read_labels

        found = corpus_items(items)
        extracted = extract_facts(miner, found)
        # The runs given are the corpus a rule mutant must leave unchanged to be equivalent.
        result = mutate(
            miner.name, miner.rules().program, miner.verdicts, read_labels(labels), extracted, extracted
        )
        print(compact_json(result.report) if as_json else result.markdown(), end="\n" if as_json else "")
        report_malformed(found)
        if not result.holds:
            fail([f"| Mutation gate | fails: {'; '.join(result.rejections())} |"])

    @verbs.command()
    def scope() -> None:
        """Print the miner's scope: generic or tenant."""
        print(miner.scope.value)

    _test_verb(verbs, miner)
    command = typer.main.get_command(verbs)
    assert isinstance(command, TyperGroup)  # several commands make a group
    command.name = name
    return command


class _MinerGroup(TyperGroup):
    """``ouro miner``: its own commands, and any other word taken as a miner's name."""

    def get_command(self, ctx: Any, cmd_name: str) -> Any:  # typer's vendored click types are private
        return super().get_command(ctx, cmd_name) or _verbs(cmd_name)


miner_app = typer.Typer(
    cls=_MinerGroup,
    no_args_is_help=True,
    help="Miners: list, new, test, and `ouro miner NAME facts|findings|backtest|mutate|scope …`.",
)


def _print_miners(rows: list[dict[str, Any]]) -> None:
    """The miners as tab-separated lines under a header; origin and path share the last column."""
    print("\t".join(("NAME", "FOLDER", "SCOPE", "VERDICTS", "GATE", "SEVERITY", "ORIGIN")))
    for row in rows:
        cells = (
            row["name"],
            row["folder"],
            row["scope"],
            ",".join(row["verdicts"]),
            row["gate"],
            row["severity"],
        )
        print("\t".join((*map(str, cells), f"{row['origin']} {row['path']}")))


@miner_app.command("list")
def list_cmd(as_json: JsonReport = False) -> None:
    """Every discovered miner: name, folder, scope, verdicts, gate, severity and where it came from."""
    from ouroboros_gates.miners import discover

    miners, broken = discover()
    rows = [
        {
            "name": miner.name,
            "folder": miner.folder.name,
            "scope": miner.scope.value,
            "verdicts": list(miner.verdicts),
            "gate": miner.gate,
            "severity": miner.severity.value,
            "origin": miner.origin,
            "path": str(miner.folder),
        }
        for miner in miners.values()
    ]
    if as_json:
        print(json.dumps({"miners": rows, "broken": {str(k): v for k, v in broken.items()}}, indent=2))
    else:
        _print_miners(rows)
    for folder, error in broken.items():
        print(f"broken\t{folder.name}\t{error}", file=sys.stderr)


@miner_app.command("new")
def new_cmd(
    name: Annotated[
        str, typer.Argument(help="The new miner's folder, a Python identifier (e.g. sleep_poll).")
    ],
    directory: Annotated[
        Path | None,
        typer.Option(
            "--dir", help="Create it here (default: the first OURO_MINERS_PATH folder, else miners/)."
        ),
    ] = None,
) -> None:
    """Copy _template to a new miner folder and rename it; it fails its test until you label fixtures."""
    from ouroboros_gates.miners import miner_folders, new_miner

    target = new_miner(name, directory)
    print(f"created {target.resolve()}")
    if not any(folder.resolve() == target.resolve() for folder, _origin in miner_folders()):
        print(f"discover it with OURO_MINERS_PATH={target.parent.resolve()}")
    print(f"next: edit extract.py and rules.dl, add fixtures, then `ouro miner test {name} --write`")


@miner_app.command("test")
def test_cmd(
    name: Annotated[str, typer.Argument(help="A miner's NAME or folder.")],
    write: WriteOption = False,
    as_json: JsonReport = False,
    runs: RunsOption = None,
    more: MoreRuns = None,
) -> None:
    """The miner test: check_rules, fixtures vs labels at κ*, FN = 0, knee binds, mutation gate, files
    current."""
    from ouroboros_gates.miners import find_miner

    miner_test_cmd(find_miner(name), write, as_json, runs_given(runs, more))
