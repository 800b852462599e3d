"""The miner test (docs/loop.md, "Miner test"): every check a miner must pass to be accepted, run over
its own fixtures, in order.

    check_rules             rules.dl parses, opens with /* predicate */, is safe and stratified (first:
                            nothing else runs without it)
    verdicts_defined        every name in VERDICTS is derived by some rule
    fixtures_labelled       fixtures/labels.tsv parses, and labels exactly the fixture runs
    backtest_fn             FN = 0 (a knee fitted when there are candidates)
    fixtures_match_labels   the fixtures' verdicts at κ* match their labels
    knee_binds              the verdicts move with the knee (see ``miners.checks``)
    local_facts             a ``LOCAL`` miner only: each fixture run's facts are its events' facts, each
                            event extracted alone (what a gate that keeps facts line by line relies on)
    mutation_gate           the mutation score reaches the floor; no survivor changes a labelled verdict
    backtest_md, mutation_md, readme_block
                            the generated files are current: regenerated text identical
                            (``write=True`` regenerates them instead); not compared when the mutation
                            test judged equivalence on a corpus too (``runs``), as the files are the
                            fixtures' alone
    readme                  README.md carries the agent-drafted marker
    template_floor          the template only: ``TEMPLATE_FLOOR`` is its measured score
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ouroboros_gates.miners.backtest import BacktestResult, number
from ouroboros_gates.miners.checks import (
    BACKTEST_FN,
    CHECK_RULES,
    FIXTURES_MATCH_LABELS,
    KNEE_BINDS,
    CheckRun,
    run_checks,
)
from ouroboros_gates.miners.corpus import JSONL, CorpusItem, EventsItem, corpus_items, fixture_items
from ouroboros_gates.miners.errors import LabelsError, MinerError, RulesError
from ouroboros_gates.miners.findings import Extracted, extract_facts
from ouroboros_gates.miners.labels import Labels, read_labels
from ouroboros_gates.miners.mutate import TEMPLATE_FLOOR, Mutant, MutationResult, mutant_text, mutate
from ouroboros_gates.miners.registry import MINERS_DIR, Miner, shown
from ouroboros_gates.miners.rules import Rules, derived_predicates
from ouroboros_gates.schemas import Fact, HarnessEvent
from ouroboros_gates.schemas.errors import CorpusError

__all__ = [
    "AGENT_DRAFTED",
    "BLOCK_END",
    "BLOCK_START",
    "Check",
    "MinerTestReport",
    "miner_test",
    "render_files",
]

AGENT_DRAFTED = "<!-- agent-drafted -->"
BLOCK_START = "<!-- backtest -->"
BLOCK_END = "<!-- /backtest -->"
_BLOCK = re.compile(re.escape(BLOCK_START) + r"\n.*?" + re.escape(BLOCK_END), re.DOTALL)


@dataclass(frozen=True)
class Check:
    """One check's outcome and a line saying why."""

    name: str
    passed: bool
    detail: str

    def line(self) -> str:
        """The check's line in the report."""
        return f"  {'ok  ' if self.passed else 'FAIL'}  {self.name:<22} {self.detail}"


@dataclass
class MinerTestReport:
    """Every check's outcome, the backtest and mutation results, and the files written."""

    miner: Miner
    checks: list[Check] = field(default_factory=list)
    backtest: BacktestResult | None = None
    mutation: MutationResult | None = None
    written: list[Path] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(check.passed for check in self.checks)

    def add(self, name: str, problem: str | None, fine: str = "") -> None:
        self.checks.append(Check(name, problem is None, problem or fine))

    def lines(self) -> list[str]:
        """The report as printed: one line per check, the survivors with their rules or labels, a
        verdict."""
        out = [f"{self.miner.name} ({self.miner.folder.name}, {self.miner.origin})"]
        out += [check.line() for check in self.checks]
        out += self._mutation_lines()
        out += [f"  wrote {path}" for path in self.written]
        return [*out, f"{self.miner.name}: {self._verdict()}"]

    def _verdict(self) -> str:
        failed = sum(not c.passed for c in self.checks)
        return (
            f"{failed} of {len(self.checks)} checks failed" if failed else f"{len(self.checks)} checks passed"
        )

    def _mutation_lines(self) -> list[str]:
        """Each surviving mutant with its rules or labels, and the runs equivalence was judged on."""
        if self.mutation is None:
            return []
        out = []
        for mutant, _result in self.mutation.survivors:
            out += _survivor_lines(mutant)
        if self.mutation.corpus_runs:
            out.append(f"  equivalence judged on {self.mutation.judged_on_text()}")
        return out


def _survivor_lines(mutant: Mutant) -> list[str]:
    """A surviving mutant: what was changed, then its rules or labels."""
    return [
        f"  survivor: {mutant.operator.value} {mutant.description}",
        *(f"    {line}" for line in mutant_text(mutant).splitlines()),
    ]


def render_files(miner: Miner, result: BacktestResult, mutation: MutationResult) -> dict[Path, str]:
    """The generated files' text: backtest.md, mutation.md, and README.md with its block replaced."""
    how = f"Generated by `ouro miner test {miner.folder.name} --write` over `fixtures/`; never edit by hand."
    files = {
        miner.folder / "backtest.md": f"# Backtest: {miner.name}\n\n{how}\n\n{result.markdown()}",
        miner.folder / "mutation.md": f"# Mutation: {miner.name}\n\n{how}\n\n{mutation.markdown()}",
    }
    readme = miner.folder / "README.md"
    text = readme.read_text(encoding="utf-8") if readme.is_file() else f"# {miner.name}\n\n{AGENT_DRAFTED}\n"
    block = f"{BLOCK_START}\n{result.markdown()}{BLOCK_END}"
    files[readme] = (
        _BLOCK.sub(lambda _match: block, text) if _BLOCK.search(text) else f"{text.rstrip()}\n\n{block}\n"
    )
    return files


def _rules(report: MinerTestReport) -> Rules | None:
    try:
        rules = report.miner.rules()
    except RulesError as exc:
        report.add(CHECK_RULES, str(exc))
        return None
    report.add(CHECK_RULES, None, f"{len(rules.program.rules)} rule(s), safe and stratified")
    missing = [v for v in report.miner.verdicts if v not in derived_predicates(rules.program)]
    report.add(
        "verdicts_defined",
        f"no rule derives {', '.join(missing)}" if missing else None,
        ", ".join(report.miner.verdicts),
    )
    return rules


def _readme(report: MinerTestReport) -> None:
    readme = report.miner.folder / "README.md"
    marked = readme.is_file() and AGENT_DRAFTED in readme.read_text(encoding="utf-8")
    report.add(
        "readme", None if marked else f"README.md lacks the {AGENT_DRAFTED} marker", "agent-drafted marker"
    )


def _fixtures(report: MinerTestReport) -> tuple[Labels, Extracted] | None:
    read = _read_fixtures(report)
    if read is None:
        return None
    labels, extracted = read
    problem = _fixtures_problem(labels, extracted)
    report.add("fixtures_labelled", problem, f"{len(labels.rows)} labelled fixture run(s)")
    return read if problem is None else None


def _read_fixtures(report: MinerTestReport) -> tuple[Labels, Extracted] | None:
    """The labels and the fixture runs' facts, or None with the check failed on why they cannot be read."""
    miner = report.miner
    try:
        return read_labels(miner.labels_path), extract_facts(miner, fixture_items(miner.fixtures))
    except (LabelsError, CorpusError, MinerError) as exc:
        report.add("fixtures_labelled", str(exc))
        return None


def _fixtures_problem(labels: Labels, extracted: Extracted) -> str | None:
    """Why the labels do not label exactly the fixture runs, or None."""
    if not labels.rows:
        return f"{labels.file}: no labels"
    labelled = {row.instance for row in labels.rows}
    unlabelled = sorted(set(extracted.instances) - labelled)
    missing = sorted(labelled - set(extracted.instances))
    if unlabelled or missing:
        return _unmatched(unlabelled, missing)
    return None


def _unmatched(unlabelled: list[str], missing: list[str]) -> str:
    return (
        f"fixture runs without a label: {unlabelled or 'none'}; "
        f"labels without a fixture run: {missing or 'none'}"
    )


def _local(report: MinerTestReport) -> None:
    """A ``LOCAL`` miner's claim, checked on its fixtures: the run's facts are its events' facts, each
    event extracted alone (the same facts, each as often)."""
    miner = report.miner
    for item in fixture_items(miner.fixtures):
        events = list(item.events())
        whole = _facts_of(miner, item, events)
        alone = [fact for event in events for fact in _facts_of(miner, item, [event])]
        if _dumped(whole) != _dumped(alone):
            problem = f"LOCAL, but {item.instance}'s facts differ when its events are read one at a time"
            report.add("local_facts", problem)
            return
    report.add("local_facts", None, "each fixture run's facts are its events' facts, one event at a time")


def _facts_of(miner: Miner, item: CorpusItem, events: list[HarnessEvent]) -> tuple[Fact, ...]:
    """The facts the miner extracts from some of a fixture run's events, read as the whole run."""
    return extract_facts(miner, [EventsItem(JSONL, item.instance, item.path, item.files, events)]).facts[
        item.instance
    ]


def _dumped(facts: Iterable[Fact]) -> list[str]:
    """The facts as JSON, sorted: equal for the same facts, each as often."""
    return sorted(fact.model_dump_json() for fact in facts)


def _files(report: MinerTestReport, result: BacktestResult, mutation: MutationResult, write: bool) -> None:
    for path, text in render_files(report.miner, result, mutation).items():
        _file(report, path, text, write)


_FILE_CHECKS = {"backtest.md": "backtest_md", "mutation.md": "mutation_md", "README.md": "readme_block"}
"""The check of each generated file."""


def _file(report: MinerTestReport, path: Path, text: str, write: bool) -> None:
    """Check that a generated file holds ``text``; with ``write``, write it where it does not."""
    current = path.read_text(encoding="utf-8") if path.is_file() else None
    if write and current != text:
        path.write_text(text, encoding="utf-8")
        report.written.append(Path(shown(path)))
    stale = not write and current != text
    command = f"ouro miner test {report.miner.folder.name} --write"
    hint = f"{path.name} is not the regenerated text: run `{command}`"
    report.add(_FILE_CHECKS[path.name], hint if stale else None, f"{path.name} current")


def _judged(report: MinerTestReport, run: CheckRun, labels: Labels) -> None:
    assert run.result is not None  # check_rules passed before
    kappa = "none" if run.result.kappa_star is None else number(run.result.kappa_star)
    knee = "the verdicts change with the knee removed and moved" if run.result.candidates else "no knee"
    fine = {
        BACKTEST_FN: f"FN = 0 on {len(run.result.judged)} judged, κ* = {kappa}",
        FIXTURES_MATCH_LABELS: f"{len(labels.rows)} verdicts at κ* = {kappa} match their labels",
        KNEE_BINDS: knee,
    }
    for name, detail in fine.items():
        report.add(name, run.failures.get(name), detail)


def _gate(report: MinerTestReport, mutation: MutationResult) -> None:
    score = mutation.report.score
    shown = "none" if score is None else f"{score:.2f}"
    report.add(
        "mutation_gate",
        "; ".join(mutation.rejections()) or None,
        f"score {shown} ≥ floor {TEMPLATE_FLOOR:.2f}",
    )


def _floor(report: MinerTestReport, mutation: MutationResult) -> None:
    score = mutation.report.score
    shown = "none" if score is None else f"{score:.2f}"
    if report.miner.folder == MINERS_DIR / "_template":
        stale = f"TEMPLATE_FLOOR = {TEMPLATE_FLOOR} but the template measures {shown}"
        report.add(
            "template_floor", None if score == TEMPLATE_FLOOR else stale, f"TEMPLATE_FLOOR = {TEMPLATE_FLOOR}"
        )


def miner_test(miner: Miner, write: bool = False, runs: Sequence[str] = ()) -> MinerTestReport:
    """Run every check of the miner test on ``miner``'s fixtures; ``write`` regenerates the files; ``runs``
    (files, run directories, projects folders, globs) are the miner's corpus: a rule mutant that changes a
    verdict on one of them is not equivalent."""
    report = MinerTestReport(miner)
    rules = _rules(report)
    fixtures = _fixtures(report) if rules is not None else None
    if rules is None or fixtures is None:
        return report
    _test_on_fixtures(report, rules, *fixtures, write, runs)
    return report


def _test_on_fixtures(
    report: MinerTestReport,
    rules: Rules,
    labels: Labels,
    extracted: Extracted,
    write: bool,
    runs: Sequence[str],
) -> None:
    """The checks that run once the rules are sound and the fixtures labelled: the backtest's, LOCAL's, the
    mutation gate, the generated files, the README's marker and the template's floor."""
    miner = report.miner
    run = run_checks(miner.name, rules.program, miner.verdicts, labels, extracted)
    assert run.result is not None  # check_rules passed above
    report.backtest = run.result
    _judged(report, run, labels)
    if miner.local:
        _local(report)
    corpus = extract_facts(miner, corpus_items(runs)) if runs else None
    report.mutation = mutate(miner.name, rules.program, miner.verdicts, labels, extracted, corpus)
    _gate(report, report.mutation)
    if corpus is None:
        _files(report, run.result, report.mutation, write)
    _readme(report)
    _floor(report, report.mutation)
