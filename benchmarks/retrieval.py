"""Retrieval latency over a 10,000-example memory: p50/p95 of ``retrieve`` (stage 1 Gower on the real
feature set, stage 2 cosine re-rank over 256-d vectors, balance rule) beside a brute-force numpy peer that
re-ranks every example (no stage 1 cut), and the pure-Python reference distance on a few queries.

    .venv/bin/python benchmarks/retrieval.py [--examples 10000] [--queries 200] [--seed 7]

The memory is synthetic and seeded: records drawn over ``FEATURES`` (instrument states ran / none /
failed, nulls where an instrument did not run), 6 families, 400 repository groups, unit vectors. The last
line is the ratio ours / peer at p95 (target: ours p95 < 50 ms).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

import numpy as np
from _markdown import add_markdown_option, against, write_block

from ouroboros_gates.decider.features import FEATURES
from ouroboros_gates.decider.memory import Memory, MemoryExample
from ouroboros_gates.decider.retrieve import (
    Boundary,
    Index,
    Settings,
    Target,
    columns_from_specs,
    gower,
    retrieve,
)
from ouroboros_gates.schemas import Example, InstrumentState, Scalar, State

FAMILIES = ("sql_injection", "command_injection", "path_traversal", "xss", "ssrf", "deserialization")
STATES = (State.RAN, State.RAN, State.RAN, State.NONE, State.FAILED)


def record(rng: random.Random) -> tuple[dict[str, Scalar], dict[str, InstrumentState]]:
    columns = columns_from_specs(FEATURES)
    states = {block: InstrumentState(state=rng.choice(STATES)) for block in {c.block for c in columns}}
    x: dict[str, Scalar] = {}
    for spec in FEATURES:
        if spec.prior or spec.instrument not in states:
            continue
        if states[spec.instrument].state is not State.RAN:
            x[spec.name] = None
        elif spec.type == "bool":
            x[spec.name] = rng.random() < 0.3
        elif spec.type == "int":
            x[spec.name] = rng.randint(0, spec.cap or 10)
        elif spec.type == "float":
            x[spec.name] = round(rng.random(), 3)
        else:
            x[spec.name] = rng.choice(spec.vocabulary)
    return x, states


def build(n: int, rng: random.Random, dims: int = 256) -> Memory:
    examples = []
    for i in range(n):
        x, states = record(rng)
        e = Example(
            excerpt_sha=f"{i:064x}",
            x=x,
            instruments=states,
            y=rng.randint(0, 1),  # type: ignore[arg-type]
            group=f"g{rng.randrange(400)}",
            language="python",
            family=rng.choice(FAMILIES),
        )
        examples.append(MemoryExample(example=e, excerpt=f"   1  example_{i}()", source="pairs"))
    memory = Memory(examples)
    vectors = np.asarray([[rng.gauss(0, 1) for _ in range(dims)] for _ in range(n)], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    memory.vectors = {e.embedding_key: vectors[i] for i, e in enumerate(memory.examples)}
    memory.embedding_model = "synthetic"
    return memory


def brute_force(index: Index, matrix: np.ndarray, target: Target, lam: float = 0.5) -> list[int]:
    """The peer: every example's D and cosine, re-ranked in full, top k by r (no stage 1, no boundary)."""
    d = index.distances(target)
    r = lam * (1.0 - d) + (1.0 - lam) * (matrix @ target.vector)
    return list(np.argsort(-r, kind="stable")[:6])


def percentiles(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000.0


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--examples", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    add_markdown_option(parser)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    memory = build(args.examples, rng)
    columns = columns_from_specs(FEATURES)
    start = time.perf_counter()
    index = Index(memory, columns)
    index.ties(0)
    print(
        f"memory: {len(memory)} examples, {len(columns)} features in {len(index.blocks)} instrument blocks; "
        f"index built in {time.perf_counter() - start:.2f} s"
    )
    matrix = np.stack([memory.vector(e) for e in index.examples])  # type: ignore[misc]
    targets = []
    for _ in range(args.queries):
        x, states = record(rng)
        vector = np.asarray([rng.gauss(0, 1) for _ in range(256)], dtype=np.float32)
        targets.append(Target(x, states, rng.choice(FAMILIES), "user/repo", vector / np.linalg.norm(vector)))
    retrieve(index, targets[0], Boundary(), Settings())  # warm
    ours = [timed(lambda t=t: retrieve(index, t, Boundary(), Settings())) for t in targets]
    peer = [timed(lambda t=t: brute_force(index, matrix, t)) for t in targets]
    sample = targets[:3]
    reference = [
        timed(
            lambda t=t: [
                gower((t.x, t.instruments), (e.example.x, e.example.instruments), columns)
                for e in index.examples
            ]
        )
        for t in sample
    ]
    o50, o95 = percentiles(ours)
    p50, p95 = percentiles(peer)
    print(
        f"ours  retrieve (stage 1 + re-rank + balance): p50 {o50:.2f} ms  p95 {o95:.2f} ms  ({len(ours)} "
        "queries)"
    )
    print(f"peer  brute-force numpy re-rank of all {len(memory)}: p50 {p50:.2f} ms  p95 {p95:.2f} ms")
    print(
        f"reference pure-Python Gower over all {len(memory)}: {statistics.mean(reference):.0f} ms per query"
    )
    print(f"target p95 < 50 ms: {'met' if o95 < 50 else 'NOT met'}")
    last = f"ratio ours/peer at p95: {o95 / p95:.2f}"
    mean, slow = statistics.mean(ours[: len(sample)]), statistics.mean(reference)  # the same queries
    queries, everything = f"over {len(ours)} queries", f"all {len(memory):,}"
    rows = [
        [f"p50 {queries}, against a brute-force numpy re-rank of {everything}", *against(o50, p50, "ms")],
        [f"p95 {queries}, against the same", *against(o95, p95, "ms")],
        [
            f"mean of the first {len(sample)} queries, against pure-Python Gower over {everything}",
            *against(mean, slow, "ms"),
        ],
    ]
    write_block(args.markdown, "retrieval", ["measure", "ours (`retrieve`)", "peer", "ratio"], rows, last)
    print(last)


if __name__ == "__main__":
    main()
