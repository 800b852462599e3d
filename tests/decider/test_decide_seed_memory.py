"""The synthetic seed: every label of ``ruleset/memory/labels.toml`` matches a candidate our instruments find
and excerpts carry no identity; a scan retrieves the shipped memory beside the store's examples."""

from __future__ import annotations

import tomllib
from dataclasses import replace

from ouroboros_gates.decider.memory import MemoryStore
from ouroboros_gates.decider.seed import SEED_DIR, build_seed_memory, corpus_memory
from ouroboros_gates.decider.shipped import load_shipped
from ouroboros_gates.events import SideTables, ensure_schema, make_engine


def test_every_seed_label_matches_a_candidate_and_both_labels_are_present() -> None:
    memory, missed = build_seed_memory()
    labels = tomllib.loads((SEED_DIR / "labels.toml").read_text())["labels"]
    assert missed == [] and len(memory) == len(labels)
    assert {e.y for e in memory.examples} == {0, 1}
    assert len({e.group for e in memory.examples}) >= 8
    for e in memory.examples:
        assert "ruleset" not in e.excerpt and "seed" not in e.excerpt.lower() and e.excerpt.strip()


def test_a_scan_retrieves_the_shipped_memory_beside_the_stores_examples(sqlite_url: str) -> None:
    engine = make_engine(sqlite_url)
    ensure_schema(engine)
    store = MemoryStore(SideTables(engine))
    shipped = load_shipped()
    assert corpus_memory(store).digest == shipped.digest  # nothing built at run time: the seed ships
    seed, _missed = build_seed_memory()
    first = seed.examples[0]
    extra = replace(
        first, example=first.example.model_copy(update={"group": "acme/shop"}), source="pairs", id=""
    )
    stale = replace(seed.examples[1], source="seed", id="")  # what an older version kept in the store
    store.save([extra, stale])
    both = corpus_memory(store)
    assert len(both) == len(shipped) + 1 and extra.id in {e.id for e in both.examples}
