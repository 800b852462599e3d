"""The Datalog engine against clingo on transitive closure, same program and facts, same run.

    .venv/bin/python benchmarks/datalog.py [--nodes 2000] [--edges 4000] [--seed 7] [--repeat 1]
        [--sizes small,medium,large] [--runs 10000] [--whole large]

The graph is seeded and random (distinct directed edges, no self-loops). Our time is parse + check +
evaluate (facts given as Python tuples with spans); clingo's is building the control, adding the
program and facts as text, grounding and solving. Times are CPU seconds of this process (clingo
grounds and solves on one thread), which a busy machine disturbs less than wall time; wall seconds
are shown beside them. Afterwards, outside the timings, the results are compared: the same number
of path facts, and samples of each engine's facts found in the other's (converting all of clingo's
millions of symbols to Python takes longer than both engines together). The last line is the ratio
ours / clingo.

The real-program workload (``--sizes``) runs the analyses of ``benchmarks/_analyses.py`` (points-to,
same-generation, stratified negation) on seeded input at each size: ours is parse + check + evaluate
(proofs kept: the proof of one derived fact is built after the timing, as a check), clingo's is building
the control, adding the translated program and the facts as text, grounding and solving. Every derived
fact of both engines is compared (outside the timings). For each program the exponent k of time ~ n^k
(n input facts) is fitted by least squares over the sizes run.

The miners workload runs every shipped miner (each folder of ``miners/`` with an ``extract.py``) over
``--runs`` generated harness runs: its fixture runs copied under new run ids, each with its times
stretched by a seeded random factor (so scores differ), read by the corpus readers and extracted once,
outside the timings. Both engines then evaluate the miner's rules over the same facts, with ``knee``
set to the median score: ours is parse + check + evaluate, clingo's is building the control, adding
the rules (translated) and the facts as text, grounding and solving. Every verdict is compared. The
last line prints every ratio: closure, miners, each program at the largest size run, and each program as a
whole process (``--whole``, ``benchmarks/_whole.py``: ``ouro datalog run --output P`` against clingo printing
P, CPU seconds and peak memory of each process, the outputs compared; and the time ``explain`` takes on one
atom after evaluation).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import cast

import clingo

from ouroboros_gates.miners import KNEE, Miner, corpus_items, derived_predicates, discover, extract_facts
from ouroboros_gates.miners.datalog import InputFact, Model, Value, check, evaluate, parse

if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))

from _analyses import ANALYSES, SIZES, Analysis
from _asp import asp_facts, to_asp
from _markdown import add_markdown_option, against, write_block
from _whole import whole_process

RULES = """\
path(X, Y) :- edge(X, Y).
path(X, Z) :- path(X, Y), edge(Y, Z).
"""

PROGRAM = f"""\
/* predicate
   path(X, Y): Y is reachable from X along one or more edges. */
{RULES}"""

Edge = tuple[int, int]


def random_graph(nodes: int, edges: int, seed: int) -> list[Edge]:
    """``edges`` distinct directed edges between ``nodes`` nodes, no self-loops, in draw order."""
    rng = random.Random(seed)
    found: dict[Edge, None] = {}
    while len(found) < edges:
        source, target = rng.randrange(nodes), rng.randrange(nodes)
        if source != target:
            found[(source, target)] = None
    return list(found)


@dataclass
class Timing:
    """CPU and wall seconds of one step."""

    cpu: float = 0.0
    wall: float = 0.0


@contextmanager
def timed(timing: Timing) -> Iterator[None]:
    cpu, wall = time.process_time(), time.perf_counter()
    yield
    timing.cpu += time.process_time() - cpu
    timing.wall += time.perf_counter() - wall


def run_ours(graph: Sequence[Edge]) -> tuple[Timing, Model]:
    facts = [("edge", edge, ("graph", line)) for line, edge in enumerate(graph, start=1)]
    timing = Timing()
    with timed(timing):
        model = evaluate(check(parse(PROGRAM, "closure.dl")), facts)
    return timing, model


def run_clingo(graph: Sequence[Edge]) -> tuple[Timing, Timing, clingo.Control]:
    text = RULES + "".join(f"edge({source},{target}).\n" for source, target in graph)
    ground, solve = Timing(), Timing()
    with timed(ground):
        control = clingo.Control(["--warn=none"])
        control.add("base", [], text)
        control.ground([("base", [])])
    with timed(solve):
        control.solve()
    return ground, solve, control


def verify(paths: set[Edge], control: clingo.Control, every: int = 100) -> None:
    """Exit unless clingo holds as many path facts as ours, every ``every``-th of clingo's is ours,
    and as many of ours, drawn at random, are clingo's facts."""
    count, sampled = 0, []
    for atom in control.symbolic_atoms.by_signature("path", 2):
        if count % every == 0:
            sampled.append((atom.symbol.arguments[0].number, atom.symbol.arguments[1].number))
        count += 1
    if count != len(paths) or not paths.issuperset(sampled):
        raise SystemExit(f"the engines disagree on path ({len(paths)} facts, clingo {count}): benchmark void")
    atoms = control.symbolic_atoms
    for x, y in random.Random(0).sample(sorted(paths), len(sampled)):
        found = atoms[clingo.Function("path", [clingo.Number(x), clingo.Number(y)])]
        if found is None or not found.is_fact:
            raise SystemExit(f"clingo does not derive path({x}, {y}): benchmark void")


def measure(graph: Sequence[Edge], repeat: int) -> tuple[dict[str, Timing], Model, clingo.Control]:
    """The best timing of each step over ``repeat`` runs, and the last run's results."""
    best: dict[str, Timing] = {}
    for run in range(repeat):
        ours, model = run_ours(graph)
        ground, solve, control = run_clingo(graph)
        both = Timing(ground.cpu + solve.cpu, ground.wall + solve.wall)
        timings = {"ours (parse+check+evaluate)": ours, "clingo (ground)": ground, "clingo (solve)": solve}
        timings["clingo (ground+solve)"] = both
        for name, timing in timings.items():
            if name not in best or timing.cpu < best[name].cpu:
                best[name] = timing
        if run < repeat - 1:
            del model, control  # two closures of millions of facts at once would double the memory
    return best, model, control


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--edges", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=1, help="runs of each engine; the best counts")
    parser.add_argument(
        "--runs", type=int, default=10_000, help="generated runs per miner (0: skip the miners)"
    )
    parser.add_argument(
        "--sizes", default=",".join(SIZES), help="real-program sizes, comma-separated ('': skip)"
    )
    parser.add_argument("--whole", default="large", help="the size of the whole-process workload ('': skip)")
    add_markdown_option(parser)
    options = parser.parse_args(argv)
    sizes = [size for size in options.sizes.split(",") if size]
    if unknown := sorted(set([*sizes, options.whole]) - set(SIZES) - {""}):
        parser.error(
            f"--sizes/--whole: unknown size(s) {', '.join(unknown)}; the sizes are {', '.join(SIZES)}"
        )
    table: list[list[str]] = []  # every workload adds its rows
    ratio = closure(options.nodes, options.edges, options.seed, options.repeat, table)
    programs = programs_workload([s for s in SIZES if s in sizes], options.seed, table) if sizes else {}
    miners_ratio = miners_workload(options.runs, options.seed, table) if options.runs else None
    whole = whole_process(ANALYSES, options.whole, options.seed, table) if options.whole else {}
    shown = "not run (--runs 0)" if miners_ratio is None else f"{miners_ratio:.2f}"
    others = "".join(f", {name}: {value:.2f}" for name, value in programs.items())
    others += "".join(f", whole {name} {options.whole}: {value:.2f}" for name, value in whole.items())
    last = f"ratio ours/clingo closure: {ratio:.2f}, miners: {shown}{others}"
    write_block(options.markdown, "datalog", ["measure", "ours", "clingo", "ratio"], table, last)
    print(last)


def closure(nodes: int, edges: int, seed: int, repeat: int, table: list[list[str]]) -> float:
    """Transitive closure on a random graph, both engines, results compared; prints the timings, adds the row,
    returns ours / clingo (CPU)."""
    graph = random_graph(nodes, edges, seed)
    rows, model, control = measure(graph, max(1, repeat))
    paths = cast(set[Edge], model.facts("path"))
    verify(paths, control)
    proof = model.proof("path", max(paths))
    print(f"transitive closure: {nodes} nodes, {len(graph)} edges (seed {seed}), best of {repeat}")
    print(
        f"path facts: {len(paths)} in both engines; proof of path{max(paths)} rests on "
        f"{len(proof.leaves())} edges"
    )
    print(f"{'':<30}{'cpu s':>10}{'wall s':>10}")
    for name, timing in rows.items():
        print(f"{name:<30}{timing.cpu:>10.3f}{timing.wall:>10.3f}")
    ours, theirs = rows["ours (parse+check+evaluate)"].cpu, rows["clingo (ground+solve)"].cpu
    what = (
        f"transitive closure, {nodes:,} nodes, {len(graph):,} edges, {len(paths):,} paths; CPU, best of "
        f"{repeat}"
    )
    table.append([what, *against(ours, theirs, "s", 3)])
    return ours / theirs


# The real programs.


def growth(points: Sequence[tuple[int, float]]) -> float:
    """The exponent k of ``seconds ~ facts^k``, by least squares on the logarithms (two sizes or more)."""
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(max(seconds, 1e-6)) for _, seconds in points]
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / spread


def run_analysis(analysis: Analysis, size: str, seed: int) -> tuple[int, int, Timing, Timing]:
    """Input facts, derived facts, our timing and clingo's on one program at one size; exits if the
    engines derive different facts."""
    facts = analysis.facts(size, seed)
    given = [
        (predicate, args, (analysis.name, line)) for line, (predicate, args) in enumerate(facts, start=1)
    ]
    ours = Timing()
    with timed(ours):
        model = evaluate(check(parse(analysis.program, f"{analysis.name}.dl")), given)
    program = parse(analysis.program, f"{analysis.name}.dl")
    derived = {predicate: check(program).arities[predicate] for predicate in derived_predicates(program)}
    asp = to_asp(program) + asp_facts(facts)
    theirs = Timing()
    found = _clingo_derived(asp, derived, theirs)
    mine = {(predicate, row) for predicate in derived for row in model.facts(predicate)}
    if mine != found:
        raise SystemExit(
            f"{analysis.name} {size}: the engines disagree ({len(mine)} facts, clingo {len(found)}): void"
        )
    predicate, row = max(mine)
    model.proof(predicate, row)
    return len(facts), len(mine), ours, theirs


def programs_workload(sizes: Sequence[str], seed: int, table: list[list[str]]) -> dict[str, float]:
    """Every analysis at each of ``sizes``; prints a row per run and the fitted growth, adds their rows to
    ``table``, returns each analysis's ours/clingo at the largest size."""
    print(f"real programs at sizes {', '.join(sizes)} (seed {seed}); every derived fact compared")
    print(f"{'':<30}{'facts':>10}{'derived':>10}{'ours cpu':>10}{'clingo cpu':>12}{'ratio':>8}")
    ratios: dict[str, float] = {}
    for analysis in ANALYSES:
        ours_points, clingo_points = [], []
        for size in sizes:
            facts, derived, ours, theirs = run_analysis(analysis, size, seed)
            ours_points.append((facts, ours.cpu))
            clingo_points.append((facts, theirs.cpu))
            ratios[analysis.name] = ours.cpu / theirs.cpu if theirs.cpu else float("nan")
            name = f"{analysis.name} {size}"
            print(
                f"{name:<30}{facts:>10}{derived:>10}{ours.cpu:>10.3f}{theirs.cpu:>12.3f}{ratios[analysis.name]:>8.2f}"
            )
            what = f"{name}: {facts:,} input facts, {derived:,} derived; CPU, proofs kept"
            table.append([what, *against(ours.cpu, theirs.cpu, "s", 3)])
        if len(sizes) > 1:
            k_ours, k_clingo = growth(ours_points), growth(clingo_points)
            print(f"{analysis.name} growth: ours ~ n^{k_ours:.2f}, clingo ~ n^{k_clingo:.2f}")
            table.append(
                [
                    f"{analysis.name}: time ~ n^k over the sizes run",
                    f"k = {k_ours:.2f}",
                    f"k = {k_clingo:.2f}",
                    "—",
                ]
            )
    return ratios


# The miners workload.


def _time_key(doc: dict[str, object]) -> str:
    """Where a fixture line keeps its time: a CSF envelope's ``ts``, a transcript line's ``timestamp``."""
    return "ts" if isinstance(doc.get("ts"), str) else "timestamp"


def _stretched(line: str, start: datetime, origin: datetime, factor: float) -> str:
    doc = json.loads(line)
    key = _time_key(doc)
    if isinstance(doc.get(key), str):
        moment = datetime.fromisoformat(doc[key])
        seconds = round((moment - origin).total_seconds() * factor)
        doc[key] = (start + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")
    return json.dumps(doc) + "\n"


def generate_runs(miner: Miner, count: int, seed: int, root: Path) -> None:
    """``count`` runs under ``root``: the miner's fixture runs, renamed, times stretched by a factor
    in [0.5, 2] and shifted a minute apart."""
    fixtures = sorted(miner.fixtures.glob("*/events.jsonl"))
    if not fixtures:
        raise SystemExit(f"{miner.name} has no fixture runs to generate from")
    texts = [path.read_text(encoding="utf-8").splitlines() for path in fixtures]
    rng = random.Random(seed)
    base = datetime.fromisoformat("2026-10-01T00:00:00+00:00")
    for number in range(count):
        lines = texts[number % len(texts)]
        first = json.loads(lines[0])
        origin = datetime.fromisoformat(first[_time_key(first)])
        start, factor = base + timedelta(minutes=number), rng.uniform(0.5, 2.0)
        run = root / f"{miner.folder.name}-{number:05d}"
        run.mkdir()
        (run / "events.jsonl").write_text("".join(_stretched(line, start, origin, factor) for line in lines))


def _median_knee(facts: Sequence[InputFact]) -> Value:
    scores = [
        args[-1] for predicate, args, _span in facts if predicate == "score" and not isinstance(args[-1], str)
    ]
    return round(statistics.median(scores)) if scores else 0


def _clingo_derived(text: str, derived: dict[str, int], timing: Timing) -> set[tuple[str, tuple[Value, ...]]]:
    """Ground and solve ``text`` (timed); the atoms of the ``derived`` predicates (name: arity)."""
    with timed(timing):
        control = clingo.Control(["--warn=none"])
        control.add("base", [], text)
        control.ground([("base", [])])
        control.solve()
    found: set[tuple[str, tuple[Value, ...]]] = set()
    for predicate, arity in derived.items():
        for atom in control.symbolic_atoms.by_signature(f"d_{predicate}", arity):
            args = atom.symbol.arguments
            found.add(
                (predicate, tuple(a.number if a.type == clingo.SymbolType.Number else a.string for a in args))
            )
    return found


def run_miner(miner: Miner, runs: int, seed: int) -> tuple[Timing, Timing, int, int]:
    """Ours and clingo's timings on one miner over ``runs`` generated runs, facts and verdicts counted."""
    with tempfile.TemporaryDirectory(prefix="ouro-bench-") as root:
        generate_runs(miner, runs, seed, Path(root))
        facts = extract_facts(miner, corpus_items([str(Path(root) / "*" / "events.jsonl")])).input_facts()
    text = miner.rules_path.read_text(encoding="utf-8")
    facts.append((KNEE, (_median_knee(facts),), None))
    ours = Timing()
    with timed(ours):
        model = evaluate(check(parse(text, str(miner.rules_path))), facts)
    checked = check(parse(text, str(miner.rules_path)))
    derived = {predicate: checked.arities[predicate] for predicate in derived_predicates(checked.program)}
    asp = to_asp(checked.program) + asp_facts((predicate, args) for predicate, args, _span in facts)
    theirs = Timing()
    found = _clingo_derived(asp, derived, theirs)
    mine = {(p, tuple(args)) for p in derived for args in model.facts(p)}
    if mine != found:
        raise SystemExit(
            f"{miner.name}: the engines disagree ({len(mine)} verdicts, clingo {len(found)}): void"
        )
    return ours, theirs, len(facts), len(mine)


def miners_workload(runs: int, seed: int, table: list[list[str]]) -> float:
    """Every shipped miner over ``runs`` generated runs; prints a row per miner, adds the rows to ``table``,
    returns ours/clingo."""
    installed = [m for m in discover("")[0].values() if m.origin == "installed"]
    total_ours, total_theirs = Timing(), Timing()
    print(f"miners: {len(installed)} shipped, {runs} generated runs each (seed {seed})")
    print(f"{'':<30}{'facts':>10}{'verdicts':>10}{'ours cpu':>10}{'clingo cpu':>12}")
    for miner in installed:
        ours, theirs, facts, verdicts = run_miner(miner, runs, seed)
        total_ours.cpu, total_theirs.cpu = total_ours.cpu + ours.cpu, total_theirs.cpu + theirs.cpu
        print(f"{miner.name:<30}{facts:>10}{verdicts:>10}{ours.cpu:>10.3f}{theirs.cpu:>12.3f}")
        table.append(
            [
                f"miner `{miner.name}`: {facts:,} facts, {verdicts:,} verdicts; CPU",
                *against(ours.cpu, theirs.cpu, "s", 3),
            ]
        )
    table.append(
        [
            f"every shipped miner ({len(installed)}), {runs:,} generated runs each; CPU",
            *against(total_ours.cpu, total_theirs.cpu, "s", 3),
        ]
    )
    return total_ours.cpu / total_theirs.cpu if total_theirs.cpu else float("nan")


if __name__ == "__main__":
    main()
