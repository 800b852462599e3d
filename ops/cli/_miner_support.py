"""What the ``ouro miner`` verbs share: reporting what the readers skipped, failing a report, the miner test,
``--runs`` with many values, the knee a knee miner's findings use, and the ledger's labels."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ouroboros_gates.harness import Unread
    from ouroboros_gates.miners import BacktestResult, CorpusItem, Labels, Miner, MinerTestReport

__all__ = ["fail", "from_ledger", "knee_of", "miner_test_cmd", "report_malformed", "runs_given"]


def report_malformed(items: list[CorpusItem], exit_on_unread: bool = False) -> None:
    """The lines the readers skipped (file:line: why), what a run's layout lacks, and each file no reader
    could read, on stderr; with ``exit_on_unread``, exit status 1 when there was such a file (the output
    stands)."""
    unread = [bad for item in items for bad in item.unread]
    for item in items:
        _print_skipped(item)
    _print_unread(unread)
    if exit_on_unread and unread:
        sys.stdout.flush()
        raise SystemExit(1)


def _print_skipped(item: CorpusItem) -> None:
    """What an item's layout lacks (its notes), then each line its reader skipped, on stderr."""
    for note in item.notes:
        print(f"note: {note}", file=sys.stderr)
    for skipped in item.malformed:
        print(f"{skipped}", file=sys.stderr)


def _print_unread(unread: list[Unread]) -> None:
    """Each file no reader could read, on stderr."""
    for bad in unread:
        print(f"ouro: {bad}", file=sys.stderr)


def fail(rows: list[str]) -> None:
    """The failing rows of a report on stderr, and exit status 1."""
    for row in rows:
        print(row, file=sys.stderr)
    raise SystemExit(1)


def runs_given(runs: list[str] | None, more: list[str] | None) -> tuple[str, ...]:
    """``--runs A B C`` (and ``--runs A --runs B``): click gives the first value to the option, the rest
    here."""
    from ouroboros_gates.miners import MinerUsageError

    if more and not runs:
        raise MinerUsageError(f"{more[0]}: an ITEM goes after --runs (`--runs ITEM…`)")
    return (*(runs or ()), *(more or ()))


def miner_test_cmd(miner: Miner, write: bool, as_json: bool, runs: tuple[str, ...]) -> None:
    from ouroboros_gates.miners import miner_test

    report = miner_test(miner, write=write, runs=runs)
    if as_json:
        print(json.dumps(_test_json(miner, report), indent=2))
    else:
        for line in report.lines():
            print(line)
    if not report.passed:
        raise SystemExit(1)


def _test_json(miner: Miner, report: MinerTestReport) -> dict[str, object]:
    """``ouro miner test --json``: whether the miner passed, and each check with its detail."""
    checks = [
        {"check": check.name, "passed": check.passed, "detail": check.detail} for check in report.checks
    ]
    return {"miner": miner.name, "passed": report.passed, "checks": checks}


def knee_of(miner: Miner) -> float | int | str | None:
    """The knee a miner's findings use when none is given: none for rules that read no knee; else κ*, the one
    its backtest fits on its own fixtures and labels (said on stderr), or ``MinerUsageError`` saying why there
    is none."""
    from ouroboros_gates.miners import (
        KNEE,
        MinerError,
        MinerUsageError,
        backtest,
        extract_facts,
        fixture_items,
        read_labels,
    )

    rules = miner.rules()
    if KNEE not in rules.checked.arities:
        return None
    try:
        fitted = backtest(
            miner.name,
            rules,
            miner.verdicts,
            read_labels(miner.labels_path),
            extract_facts(miner, fixture_items(miner.fixtures)),
        )
    except MinerError as exc:  # no labels, a label without its fixture: the miner test names the same
        raise MinerUsageError(f"--knee: {miner.name} has no fitted knee ({exc}); give --knee K") from exc
    if fitted.kappa_star is None:
        raise MinerUsageError(f"--knee: {miner.name} has no fitted knee ({_no_knee(fitted)}); give --knee K")
    print(
        f"knee: κ* = {fitted.kappa_star} (fitted on {miner.name}'s fixtures; --knee K sets another)",
        file=sys.stderr,
    )
    return fitted.kappa_star


def _no_knee(fitted: BacktestResult) -> str:
    """Why a backtest fitted no knee: no candidate at all, or none that misses nothing."""
    return "no `score` facts in its fixtures" if not fitted.candidates else "no candidate misses nothing"


def from_ledger(miner: str, items: list[str] | None, as_of: str | None) -> tuple[Labels, list[CorpusItem]]:
    """The labels the event log held for ``miner`` by ``as_of`` (an operator's review standing over the
    labeler's check), and the runs named (or recorded by then)."""
    from ouroboros_gates.events import open_store
    from ouroboros_gates.ops.backtests import ledger_labels
    from ouroboros_gates.ops.cli._common import instant
    from ouroboros_gates.schemas.settings import load_settings

    moment = None if as_of is None else instant(as_of)
    judged = ledger_labels(open_store(load_settings().event_log_url), miner, moment, items)
    for note in judged.left_out:
        print(note, file=sys.stderr)
    return judged.labels, judged.items
