"""The packaged seed memory: every label of ``ruleset/memory/labels.toml`` matches a candidate our
instruments find, excerpts carry no identity, and the store keeps it once per seed digest."""

from __future__ import annotations

import tomllib

from ouroboros_gates.decider.memory import MemoryStore
from ouroboros_gates.decider.seed import SEED_DIR, build_seed_memory, corpus_memory
from ouroboros_gates.events import ensure_schema, make_engine


def test_every_seed_label_matches_a_candidate_and_both_labels_are_present() -> None:
    memory, missed = build_seed_memory()
    labels = tomllib.loads((SEED_DIR / "labels.toml").read_text())["labels"]
    assert missed == [] and len(memory) == len(labels)
    assert {e.y for e in memory.examples} == {0, 1}
    assert len({e.group for e in memory.examples}) >= 8
    for e in memory.examples:
        assert "ruleset" not in e.excerpt and "seed" not in e.excerpt.lower() and e.excerpt.strip()


def test_the_store_keeps_the_seed_once(sqlite_url: str) -> None:
    engine = make_engine(sqlite_url)
    ensure_schema(engine)
    store = MemoryStore(engine)
    first = corpus_memory(store)
    assert len(store.load("static")) == len(first)
    again = corpus_memory(store)
    assert again.digest == first.digest and len(store.load("static")) == len(first)


def test_the_packaged_vote_threshold_still_reaches_its_recall_on_the_seed() -> None:
    from ouroboros_gates.decider.assemble import packaged_program
    from ouroboros_gates.decider.seed import leave_one_group_out

    program = packaged_program("memory-vote")
    assert program is not None
    point = program.point("sql_injection")
    assert point is not None and not point.block_offered
    scored = leave_one_group_out(build_seed_memory()[0])
    positives = [s for s, y in scored if y == 1]
    recall = sum(s >= point.advisory for s in positives) / len(positives)
    assert recall >= 0.90, (recall, sorted(scored))
