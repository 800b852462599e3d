"""Retrieve: the Gower distance by instrument block (hand-computed), the vectorised index agreeing with
it, the re-rank, the balance rule, and the evaluation boundary as the only way into a prompt."""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ouroboros_gates.decider.memory import Memory, MemoryExample
from ouroboros_gates.decider.retrieve import (
    Boundary,
    Column,
    Index,
    Neighbour,
    Settings,
    Target,
    balance,
    columns_from_specs,
    eligible,
    gower,
    retrieve,
)
from ouroboros_gates.schemas import Example, InstrumentState, State

COLUMNS = (
    Column("qr.hits", "qr", 20.0),
    Column("qr.kind", "qr"),
    Column("facts.callers", "facts", 40.0),
    Column("lang.python", "lang"),
)


def st_(s: State) -> InstrumentState:
    return InstrumentState(state=s)


RAN, NONE, FAILED = st_(State.RAN), st_(State.NONE), st_(State.FAILED)


def test_both_ran_is_the_mean_of_feature_distances() -> None:
    a = (
        {"qr.hits": 2, "qr.kind": "sql", "facts.callers": 4, "lang.python": True},
        {"qr": RAN, "facts": RAN, "lang": RAN},
    )
    b = (
        {"qr.hits": 12, "qr.kind": "cmd", "facts.callers": 4, "lang.python": True},
        {"qr": RAN, "facts": RAN, "lang": RAN},
    )
    # qr: (10/20 + 1) / 2 = 0.75; facts: 0; lang: 0 -> D = 0.75 / 3
    assert gower(a, b, COLUMNS) == pytest.approx(0.25)


def test_state_rules_and_nulls() -> None:
    ran = {"qr": RAN, "facts": RAN, "lang": RAN}
    x = {"qr.hits": 0, "qr.kind": None, "facts.callers": 0, "lang.python": True}
    assert gower((x, ran), (x, ran), COLUMNS) == 0.0  # null in both is 0
    one_null = {**x, "qr.kind": "sql"}
    assert gower((x, ran), (one_null, ran), COLUMNS) == pytest.approx((0.5 + 0 + 0) / 3)  # null in one is 1
    none = {"qr": RAN, "facts": NONE, "lang": RAN}
    failed = {"qr": RAN, "facts": FAILED, "lang": RAN}
    nulls = {**x, "facts.callers": None}
    assert gower((x, ran), (nulls, none), COLUMNS) == pytest.approx(1 / 3)  # ran vs none: 1
    assert gower((nulls, none), (nulls, none), COLUMNS) == 0.0  # same non-ran state: 0
    assert gower((nulls, none), (nulls, failed), COLUMNS) == pytest.approx(1 / 3)  # failed vs none differ


def test_prior_features_are_dropped_with_priors_off() -> None:
    @dataclass(frozen=True)
    class Spec:
        name: str
        instrument: str
        type: str
        cap: int | None = None
        prior: bool = False
        profile: str = "static"

    specs = [
        Spec("qr.hits", "qr", "int", 20),
        Spec("qr.prior_hits", "qr", "int", 10, prior=True),
        Spec("verify.x", "verify", "bool", profile="plane"),
    ]
    assert [c.name for c in columns_from_specs(specs)] == ["qr.hits"]
    assert [c.name for c in columns_from_specs(specs, priors=True)] == ["qr.hits", "qr.prior_hits"]
    assert [c.name for c in columns_from_specs(specs, profile="plane")] == ["qr.hits", "verify.x"]


def ex(
    y: int,
    family: str = "injection",
    group: str = "g",
    hits: int = 1,
    source: str = "pairs",
    frameworks: tuple[str, ...] = (),
    code: str = "",
) -> MemoryExample:
    e = Example(
        excerpt_sha=hashlib.sha256(f"{y}{hits}{group}{family}{code}".encode()).hexdigest(),
        x={"qr.hits": hits, "qr.kind": "sql", "facts.callers": 1, "lang.python": True},
        instruments={"qr": RAN, "facts": RAN, "lang": RAN},
        y=y,
        group=group,  # type: ignore[arg-type]
        language="python",
        family=family,
    )
    return MemoryExample(
        example=e,
        excerpt=code or f"   1  x = {y} + {hits}  # {group} {family}",
        source=source,
        frameworks=frameworks,
    )


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([None, 0, 3, 20]),
            st.sampled_from([None, "sql", "cmd"]),
            st.sampled_from([State.RAN, State.NONE, State.FAILED]),
        ),
        min_size=2,
        max_size=6,
    )
)
def test_the_index_agrees_with_the_reference(rows: list[tuple[int | None, str | None, State]]) -> None:
    examples = []
    for i, (hits, kind, state) in enumerate(rows):
        x = {"qr.hits": hits, "qr.kind": kind} if state is State.RAN else {"qr.hits": None, "qr.kind": None}
        x |= {"facts.callers": i % 3, "lang.python": True}
        e = Example(
            excerpt_sha=f"{i:064x}",
            x=x,
            instruments={"qr": st_(state), "facts": RAN, "lang": RAN},
            y=i % 2,
            group=f"g{i}",
            language="python",
            family="injection",
        )  # type: ignore[arg-type]
        examples.append(MemoryExample(example=e, excerpt=f"   1  x{i}", source="pairs"))
    index = Index(Memory(examples), COLUMNS)
    for a in examples:
        target = Target(a.example.x, a.example.instruments, "injection")
        got = index.distances(target)
        for b, d in zip(index.examples, got, strict=True):
            ref = gower((a.example.x, a.example.instruments), (b.example.x, b.example.instruments), COLUMNS)
            assert d == pytest.approx(ref)


def n(e: MemoryExample, score: float) -> Neighbour:
    return Neighbour(e, 1 - score, None, score)


def test_balance_caps_labels_groups_and_contrast() -> None:
    ranked = [n(ex(1, group=f"p{i}", hits=i), 1 - i / 100) for i in range(6)]
    ranked += [n(ex(0, group="same", hits=i), 0.8 - i / 100) for i in range(4)]
    ranked += [n(ex(0, family="path", group=f"c{i}", hits=i), 0.5) for i in range(3)]
    picked, short = balance(ranked, "injection", 6)
    labels = [p.example.y for p in picked]
    assert labels.count(1) == 3  # at most k/2 per label
    assert sum(p.example.group == "same" for p in picked) <= 2  # at most 2 per repository group
    assert sum(p.example.family != "injection" for p in picked) <= 2  # at most 2 contrast, never padded
    assert len(picked) == 6 and not short


def test_balance_short_is_recorded_when_a_minimum_cannot_be_met() -> None:
    ranked = [n(ex(1, group=f"p{i}", hits=i), 1.0) for i in range(5)]
    picked, short = balance(ranked, "injection", 6)
    assert short and len(picked) == 3  # no negatives in the pool: 3 positives, and short


def test_retrieve_reranks_with_embeddings_and_says_signals_only_without() -> None:
    memory = Memory(
        [
            ex(1, group="a", hits=1, code="   1  os.system(cmd)"),
            ex(0, group="b", code="   1  print(x)"),
            ex(1, group="c", hits=5),
            ex(0, group="d", hits=5),
        ]
    )
    index = Index(memory, COLUMNS)
    base = memory.examples[0].example
    target = Target(base.x, base.instruments, "injection", group="someone/else")
    plain = retrieve(index, target, Boundary(), Settings(k=4))
    assert plain.retrieval == "signals_only" and len(plain.neighbours) == 4
    for i, e in enumerate(memory.examples):  # hand-made vectors: example 1 is the closest in code
        memory.vectors[e.embedding_key] = np.eye(4, dtype=np.float32)[i]
    memory.version += 1
    index = Index(memory, COLUMNS)
    far = memory.examples[2].example  # the signals point at examples 2 and 3 (D = 0), the code at example 1
    near = Target(far.x, far.instruments, "injection", "someone/else", np.eye(4, dtype=np.float32)[1])
    by_code = retrieve(index, near, Boundary(), Settings(k=4, lam=0.5))
    assert (
        by_code.retrieval == "signals+embeddings"
        and by_code.neighbours[0].example.id == memory.examples[1].id
    )
    by_signals = retrieve(index, near, Boundary(), Settings(k=4, lam=1.0))
    assert by_signals.neighbours[0].example.id in {memory.examples[2].id, memory.examples[3].id}


FOLDS = [
    Boundary("evaluation", frozenset({"g1", "g2"})),
    Boundary("evaluation", frozenset(), held_out_source="adjudications"),
    Boundary("evaluation", frozenset(), held_out_framework="flask"),
    Boundary("deployment"),
]


@pytest.mark.parametrize(
    "fold", FOLDS, ids=["outer", "leave-one-source-out", "leave-one-framework-out", "deployment"]
)
def test_boundary_every_retrieved_example_is_eligible(fold: Boundary) -> None:
    memory = Memory(
        ex(y, group=g, hits=h, source=s, frameworks=f)
        for y, g, h, s, f in itertools.product(
            (0, 1), ("g1", "g2", "g3", "g4"), (0, 2), ("pairs", "adjudications"), ((), ("flask",))
        )
    )
    index = Index(memory, COLUMNS)
    for e in memory.examples[:8]:
        target = Target(e.example.x, e.example.instruments, "injection", group=e.group)
        got = retrieve(index, target, fold, Settings(k=6))
        assert got.neighbours, fold
        for nb in got.neighbours:
            assert eligible(nb.example, target, fold)
            assert nb.example.group != e.group and nb.example.group not in fold.evaluation_groups
            assert fold.held_out_source != nb.example.source
            assert fold.held_out_framework not in nb.example.frameworks


def test_near_duplicates_are_dropped_in_evaluation_only_and_counted() -> None:
    twin = ex(1, group="fork", hits=1)
    memory = Memory([twin, ex(0, group="other", hits=1)])
    v = np.array([1.0, 0.0], dtype=np.float32)
    memory.vectors = {
        twin.embedding_key: v,
        memory.examples[1].embedding_key: np.array([0.0, 1.0], dtype=np.float32),
    }
    target = Target(twin.example.x, twin.example.instruments, "injection", group="mine", vector=v)
    index = Index(memory, COLUMNS)
    evaluation = retrieve(index, target, Boundary("evaluation"), Settings(k=2))
    assert twin.id not in {nb.example.id for nb in evaluation.neighbours}
    assert evaluation.dropped == {"near_duplicate": 1}
    deployment = retrieve(index, target, Boundary("deployment"), Settings(k=2))
    assert twin.id in {nb.example.id for nb in deployment.neighbours}


def test_deployment_excludes_the_users_own_repository_group() -> None:
    memory = Memory([ex(1, group="acme/shop"), ex(0, group="other/repo"), ex(1, group="third/one")])
    e = memory.examples[0]
    got = retrieve(
        Index(memory, COLUMNS),
        Target(e.example.x, e.example.instruments, "injection", "acme/shop"),
        Boundary("deployment"),
        Settings(k=6),
    )
    assert {nb.example.group for nb in got.neighbours} == {"other/repo", "third/one"}
    assert got.dropped == {"self_excluded": 1}


def test_a_new_instrument_version_that_changes_no_value_does_not_reorder_equal_neighbours() -> None:
    def memory(version: str) -> Memory:
        # twelve examples all at distance 0 from the target: which k are kept is the tie-break alone
        made = []
        for i in range(12):
            e = ex(i % 2, group=f"g{i}")
            states = {
                name: InstrumentState(state=State.RAN, version=version) for name in e.example.instruments
            }
            made.append(
                MemoryExample(
                    example=e.example.model_copy(update={"instruments": states}),
                    excerpt=e.excerpt,
                    source=e.source,
                )
            )
        return Memory(made)

    def kept(version: str) -> list[str]:
        found = memory(version)
        base = found.examples[0].example
        target = Target(base.x, base.instruments, "injection", group="someone/else")
        return [
            n.example.example.group
            for n in retrieve(Index(found, COLUMNS), target, Boundary(), Settings(k=4)).neighbours
        ]

    first, second = memory("rules-1"), memory("rules-2")
    assert {e.id for e in first.examples}.isdisjoint(
        e.id for e in second.examples
    )  # the ids follow the version
    assert kept("rules-1") == kept("rules-2")  # the neighbours do not
