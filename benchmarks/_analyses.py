"""Real analysis programs for the Datalog benchmark, with seeded generators of their input at three sizes.

points-to          Andersen-style, inclusion-based: ``pointsTo`` and ``heapPointsTo`` recursive through each
                   other, over ``directFlow``, ``load``, ``store``, ``heapAlloc``, ``stackAlloc``, ``global``
                   and ``extReturn`` facts. The input is a program of modules of 40 variables: allocations,
                   forward copies, loads and stores inside a module, and a few copies from a module into
                   its caller; callers form trees of 21 modules (fan-in 4) sharing globals and external
                   objects, so points-to sets stay bounded and the derived facts grow with the input.
same-generation    ``sg(X, Y)``: X and Y are at the same depth below a common ancestor, over a forest of
                   random trees of ``parent(Child, Parent)`` (6 levels of 40 nodes each).
negation           Stratified negation over call graphs: transitive calls, reachability from entries, dead
                   functions, and the calls that reach a sink from a function neither dead nor sanitised;
                   components of 100 functions with forward calls.

Each generator returns the input facts as ``(predicate, args)`` in a fixed order for a seed; ``SIZES``
maps each size name to the generator's one parameter (modules, trees, components).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from ouroboros_gates.miners.datalog import Value

__all__ = ["ANALYSES", "SIZES", "Analysis", "Facts"]

Facts = list[tuple[str, tuple[Value, ...]]]

SIZES = ("small", "medium", "large")

POINTS_TO = """\
/* predicate
   pointsTo(V, O): variable V may point to object O.
   heapPointsTo(O, P): a field of object O may point to object P. */
pointsTo(V, O) :- heapAlloc(V, O).
pointsTo(V, O) :- stackAlloc(V, O).
pointsTo(V, O) :- global(V, O).
pointsTo(V, O) :- extReturn(V, O).
pointsTo(To, O) :- directFlow(To, From), pointsTo(From, O).
pointsTo(To, P) :- load(To, Base), pointsTo(Base, O), heapPointsTo(O, P).
heapPointsTo(O, P) :- store(Base, From), pointsTo(Base, O), pointsTo(From, P).
"""

SAME_GENERATION = """\
/* predicate
   sg(X, Y): X and Y, two distinct nodes, are at the same depth below a common ancestor. */
sg(X, Y) :- parent(X, P), parent(Y, P), ne(X, Y).
sg(X, Y) :- parent(X, A), sg(A, B), parent(Y, B).
"""

NEGATION = """\
/* predicate
   calls(F, G): F calls G, directly or through other functions.
   reach(F): F is an entry or called from one.
   dead(F): F is no entry and no entry calls it.
   unsafe(F): F calls a sink.
   safe(F): F is reached and calls no sink.
   exposed(F, G): F, live and not sanitised, calls the sink G. */
calls(F, G) :- call(F, G).
calls(F, H) :- calls(F, G), call(G, H).
reach(F) :- entry(F).
reach(G) :- entry(F), calls(F, G).
dead(F) :- func(F), !reach(F).
unsafe(F) :- calls(F, G), sink(G).
safe(F) :- reach(F), !unsafe(F).
exposed(F, G) :- calls(F, G), sink(G), !sanitized(F), !dead(F).
"""


def points_to_facts(modules: int, seed: int) -> Facts:
    """The input of ``modules`` modules (see the module's docstring), duplicates dropped."""
    width, group, fan = 40, 21, 4
    rng = random.Random(seed)
    facts: Facts = []

    def forward() -> tuple[int, int] | None:
        a, b = rng.randrange(width), rng.randrange(width)
        return None if a == b else (min(a, b), max(a, b))

    for module in range(modules):
        names = [f"v{module}_{i}" for i in range(width)]

        def var(names: list[str] = names) -> str:
            return names[rng.randrange(width)]

        facts += [("heapAlloc", (var(), f"h{module}_{i}")) for i in range(width // 4)]
        facts += [("stackAlloc", (var(), f"s{module}_{i}")) for i in range(2)]
        facts.append(("global", (var(), f"g{module // group}_{rng.randrange(3)}")))
        facts.append(("extReturn", (var(), f"x{module // group}_{rng.randrange(4)}")))
        for _ in range(width + width // 2):
            if edge := forward():
                facts.append(("directFlow", (names[edge[1]], names[edge[0]])))
        for _ in range(width // 5):
            facts.append(("store", (var(), var())))
            if edge := forward():
                facts.append(("load", (names[edge[1]], names[edge[0]])))
        if place := module % group:
            caller = module - place + (place - 1) // fan
            for _ in range(4):
                argument = names[rng.randrange(width // 2, width)]
                facts.append(("directFlow", (f"v{caller}_{rng.randrange(width)}", argument)))
    return list(dict.fromkeys(facts))


def same_generation_facts(trees: int, seed: int) -> Facts:
    """``parent(Child, Parent)`` for ``trees`` trees of 6 levels, 40 nodes a level below one root."""
    levels, width = 6, 40
    rng = random.Random(seed)
    facts: Facts = []
    for tree in range(trees):
        above = [tree * levels * width]
        for level in range(1, levels):
            row = [(tree * levels + level) * width + i for i in range(width)]
            facts += [("parent", (node, rng.choice(above))) for node in row]
            above = row
    return facts


def negation_facts(components: int, seed: int) -> Facts:
    """Call graphs of ``components`` components of 100 functions: about two forward calls each, two
    entries, sinks and sanitised functions drawn at random."""
    size = 100
    rng = random.Random(seed)
    facts: Facts = []
    for component in range(components):
        functions = [component * size + i for i in range(size)]
        facts += [("func", (f,)) for f in functions]
        facts += [("entry", (f,)) for f in rng.sample(functions[: size // 5], 2)]
        for position, f in enumerate(functions[:-1]):
            for _ in range(rng.choice((1, 2, 2, 3))):
                facts.append(("call", (f, rng.choice(functions[position + 1 :]))))
        facts += [("sink", (f,)) for f in functions if rng.random() < 0.05]
        facts += [("sanitized", (f,)) for f in functions if rng.random() < 0.2]
    return list(dict.fromkeys(facts))


@dataclass(frozen=True)
class Analysis:
    """A program, its generator, and the generator's parameter at each size."""

    name: str
    program: str
    generate: Callable[[int, int], Facts]
    sizes: dict[str, int]

    def facts(self, size: str, seed: int) -> Facts:
        return self.generate(self.sizes[size], seed)


ANALYSES = (
    Analysis("points-to", POINTS_TO, points_to_facts, dict(zip(SIZES, (63, 189, 567), strict=True))),
    Analysis(
        "same-generation",
        SAME_GENERATION,
        same_generation_facts,
        dict(zip(SIZES, (16, 48, 144), strict=True)),
    ),
    Analysis("negation", NEGATION, negation_facts, dict(zip(SIZES, (30, 90, 270), strict=True))),
)
