"""Miners: corpus items in, facts out, verdicts with proofs from a Datalog rule, and the checks that
accept a miner as a gate (walk-forward backtest, PBO guard, mutation testing of its own test).

    miner = find_miner("draft-pr-late")                  # or its folder, "_template"
    items = corpus_items(["<state>/*/events.jsonl"])     # CorpusItem: kind, instance, path, events()
    extracted = extract_facts(miner, items)              # miner.extract(item) per item, once
    findings = find(miner, miner.rules(), extracted, knee=468)
    result = backtest(miner.name, miner.rules(), miner.verdicts, read_labels(path), extracted)
    result.markdown(); result.record()                   # the block and the schemas.Backtest, one source
    report = miner_test(miner)                           # every check, as ``ouro miner test``

A miner is a folder ``miners/<name>/`` (or one in ``OURO_MINERS_PATH``); ``README.md`` here says how
to write one. The engine is ``miners.datalog``. Pure: no Celery, no SQLAlchemy.
"""

from __future__ import annotations

from ouroboros_gates.miners.backtest import BacktestResult, backtest, split
from ouroboros_gates.miners.checks import CHECKS, CheckRun, run_checks
from ouroboros_gates.miners.corpus import JSONL, CorpusItem, corpus_items, fixture_items
from ouroboros_gates.miners.errors import (
    FactsError,
    LabelsError,
    MinerDefinitionError,
    MinerError,
    MinerNotFoundError,
    MinerUsageError,
    RulesError,
)
from ouroboros_gates.miners.facts import (
    FactLineProblem,
    ProofJson,
    compact_json,
    derived_line,
    input_fact,
    proof_facts,
    proof_json,
    read_fact_lines,
    to_arg,
)
from ouroboros_gates.miners.findings import Extracted, Verdicts, extract_facts, find, judge
from ouroboros_gates.miners.knee import Confusion, best_knee, confusion
from ouroboros_gates.miners.labels import Labels, parse_labels, read_labels
from ouroboros_gates.miners.minertest import Check, MinerTestReport, miner_test
from ouroboros_gates.miners.mutate import TEMPLATE_FLOOR, Mutant, MutationResult, mutants, mutate
from ouroboros_gates.miners.pbo import DEFAULT_BLOCKS, WAITS_FOR_LABELS, Pbo, pbo
from ouroboros_gates.miners.registry import (
    MINERS_PATH_ENV,
    Miner,
    discover,
    find_miner,
    load_miner,
    miner_folders,
)
from ouroboros_gates.miners.relations import OutputFormat, write_relation
from ouroboros_gates.miners.rules import (
    KNEE,
    SCORE,
    Rules,
    check_program,
    check_rules,
    check_sources,
    derived_predicates,
    run_rules,
)
from ouroboros_gates.miners.scaffold import new_miner

__all__ = [
    "CHECKS",
    "DEFAULT_BLOCKS",
    "JSONL",
    "KNEE",
    "MINERS_PATH_ENV",
    "SCORE",
    "TEMPLATE_FLOOR",
    "WAITS_FOR_LABELS",
    "BacktestResult",
    "Check",
    "CheckRun",
    "Confusion",
    "CorpusItem",
    "Extracted",
    "FactLineProblem",
    "FactsError",
    "Labels",
    "LabelsError",
    "Miner",
    "MinerDefinitionError",
    "MinerError",
    "MinerNotFoundError",
    "MinerTestReport",
    "MinerUsageError",
    "Mutant",
    "MutationResult",
    "OutputFormat",
    "Pbo",
    "ProofJson",
    "Rules",
    "RulesError",
    "Verdicts",
    "backtest",
    "best_knee",
    "check_program",
    "check_rules",
    "check_sources",
    "compact_json",
    "confusion",
    "corpus_items",
    "derived_line",
    "derived_predicates",
    "discover",
    "extract_facts",
    "find",
    "find_miner",
    "fixture_items",
    "input_fact",
    "judge",
    "load_miner",
    "miner_folders",
    "miner_test",
    "mutants",
    "mutate",
    "new_miner",
    "parse_labels",
    "pbo",
    "proof_facts",
    "proof_json",
    "read_fact_lines",
    "read_labels",
    "run_checks",
    "run_rules",
    "split",
    "to_arg",
    "write_relation",
]
