"""The Datalog engine against clingo on transitive closure, same program and facts, same run.

    .venv/bin/python benchmarks/datalog.py [--nodes 2000] [--edges 4000] [--seed 7] [--repeat 1]

The graph is seeded and random (distinct directed edges, no self-loops). Our time is parse + check +
evaluate (facts given as Python tuples with spans); clingo's is building the control, adding the
program and facts as text, grounding and solving. Times are CPU seconds of this process (clingo
grounds and solves on one thread), which a busy machine disturbs less than wall time; wall seconds
are shown beside them. Afterwards, outside the timings, the results are compared: the same number
of path facts, and samples of each engine's facts found in the other's (converting all of clingo's
millions of symbols to Python takes longer than both engines together). The last line is the ratio
ours / clingo.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import cast

import clingo

from miners.datalog import Model, check, evaluate, parse

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
    options = parser.parse_args(argv)
    graph = random_graph(options.nodes, options.edges, options.seed)
    rows, model, control = measure(graph, max(1, options.repeat))
    paths = cast(set[Edge], model.facts("path"))
    verify(paths, control)
    proof = model.proof("path", max(paths))
    print(
        f"transitive closure: {options.nodes} nodes, {len(graph)} edges (seed {options.seed}), best of {options.repeat}"
    )
    print(f"path facts: {len(paths)} in both engines; proof of path{max(paths)} rests on {len(proof.leaves())} edges")
    print(f"{'':<30}{'cpu s':>10}{'wall s':>10}")
    for name, timing in rows.items():
        print(f"{name:<30}{timing.cpu:>10.3f}{timing.wall:>10.3f}")
    ratio = rows["ours (parse+check+evaluate)"].cpu / rows["clingo (ground+solve)"].cpu
    print(f"ratio ours/clingo closure: {ratio:.2f}")


if __name__ == "__main__":
    main()
