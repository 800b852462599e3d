"""Memory: excerpt rules (numbered, bounded, redacted, no identities), SQL rows and blobs, the embedding
cache per model, the local embedder, and the refusal to store user-local examples."""

from __future__ import annotations

import pytest

from ouroboros_gates.decider.embed import CachedEmbedder, HashingEmbedder
from ouroboros_gates.decider.excerpt import (
    EXAMPLE_BOUNDS,
    make_excerpt,
    normalise,
    normalised_sha,
    redact_comments,
)
from ouroboros_gates.decider.memory import Memory, MemoryRefused, MemoryStore, example_from_record
from ouroboros_gates.events import SideTables, ensure_schema, make_engine
from ouroboros_gates.schemas import Candidate, FeatureRecord, InstrumentState, State

SHA = "a" * 40
RAN = InstrumentState(state=State.RAN, version="v1")


def record(
    family: str = "injection", hits: int = 1, repo: str = "acme/shop", path: str = "app.py"
) -> FeatureRecord:
    return FeatureRecord(
        candidate=Candidate(repo=repo, pin=SHA, path=path, function="search", family=family),
        language="python",
        x={"qr.enabled_hits": hits, "lang.python": True},
        instruments={"qr": RAN, "lang": RAN},
        feature_set_digest="d" * 64,
    )


CODE = "\n".join(
    [
        "def search(q):",
        "    # CVE-2024-12345: fix the SQL injection here",
        "    sql = f\"SELECT * FROM t WHERE name = '{q}'\"  # plain note",
        "    return db.execute(sql)  # see GHSA-abcd-efgh-ijkl",
    ]
)


def test_excerpt_lines_are_numbered_from_the_function_start_and_comments_redacted() -> None:
    excerpt = make_excerpt(CODE, 10, "python")
    lines = excerpt.text.splitlines()
    assert lines[0] == "  10  def search(q):"
    assert lines[1] == "  11      # <redacted>"
    assert "# plain note" in lines[2] and 'f"SELECT' in lines[2]
    assert lines[3].endswith("# <redacted>") and "GHSA" not in excerpt.text and "CVE" not in excerpt.text
    assert (
        (excerpt.first_line, excerpt.last_line) == (10, 13) and excerpt.covers(12) and not excerpt.covers(14)
    )


def test_a_hash_inside_a_string_is_not_a_comment_and_block_comments_span_lines() -> None:
    assert redact_comments(['x = "# security"'], "python") == ['x = "# security"']
    js = ["/* fixes XSS", "   in the header */ el.innerHTML = q; // ok"]
    assert redact_comments(js, "javascript") == ["/* <redacted>", js[1]]
    assert redact_comments(["a = 1; /* CWE-79 */ b = 2;"], "c") == ["a = 1; /* <redacted> */ b = 2;"]


def test_excerpt_bounds_centre_on_the_focus_lines() -> None:
    code = "\n".join(f"x{i} = {i}" for i in range(300))
    excerpt = make_excerpt(code, 1, "python", focus=[200])
    assert len(excerpt.text.splitlines()) == 80 and excerpt.covers(200)
    small = make_excerpt(code, 1, "python", focus=[200], bounds=EXAMPLE_BOUNDS)
    assert len(small.text) <= 2000 and len(small.text.splitlines()) <= 40 and small.covers(200)
    with pytest.raises(ValueError, match="empty"):
        make_excerpt("\n  \n", 1, "python")


def test_the_same_code_at_another_line_has_the_same_embedding_key() -> None:
    a, b = make_excerpt(CODE, 10, "python"), make_excerpt(CODE, 200, "python")
    assert a.sha != b.sha and normalised_sha(a.text) == normalised_sha(b.text)
    assert normalise(a.text).startswith("def search(q):")


def test_example_holds_no_path_or_repository() -> None:
    example = example_from_record(
        record(path="secret_dir/app.py"), y=1, code=CODE, start_line=1, source="seed", group="acme/shop"
    )
    assert "secret_dir" not in example.excerpt and "acme" not in example.excerpt
    assert "path" not in example.row() and "repo" not in example.row()


def test_store_round_trip_is_idempotent_and_refuses_user_rows(sqlite_url: str) -> None:
    engine = make_engine(sqlite_url)
    ensure_schema(engine)
    store = MemoryStore(SideTables(engine))
    a = example_from_record(record(), y=1, code=CODE, start_line=1, source="seed", group="g1")
    b = example_from_record(
        record(hits=0), y=0, code=CODE + "\n    pass", start_line=1, source="seed", group="g2"
    )
    assert store.save(Memory([a, b])) == 2
    assert store.save([a]) == 0
    loaded = store.load("static")
    assert sorted(e.id for e in loaded.examples) == sorted([a.id, b.id])
    assert loaded.get(a.id).excerpt == a.excerpt and loaded.digest == Memory([b, a]).digest
    assert store.get_blob(a.example.excerpt_sha) == a.excerpt
    user = example_from_record(
        record(), y=0, code=CODE, start_line=1, source="dismissal", group="me", origin="user"
    )
    with pytest.raises(MemoryRefused, match="never written to the store"):
        store.save([user])


def test_embeddings_are_cached_per_model(sqlite_url: str) -> None:
    engine = make_engine(sqlite_url)
    ensure_schema(engine)
    store = MemoryStore(SideTables(engine))
    embedder = CachedEmbedder(HashingEmbedder(64), store)
    first = embedder.embed([make_excerpt(CODE, 1, "python").text, make_excerpt(CODE, 7, "python").text])
    assert embedder.asked == 1 and first[0] == first[1]
    again = CachedEmbedder(HashingEmbedder(64), store)
    (back,) = again.embed([make_excerpt(CODE, 40, "python").text])
    assert max(abs(u - v) for u, v in zip(back, first[0], strict=True)) < 1e-6  # stored as float32
    assert again.asked == 0  # read back from SQL, not recomputed
    other = CachedEmbedder(HashingEmbedder(32), store)
    other.embed([CODE])
    assert other.asked == 1  # another model is another vector space


def test_local_embedder_is_a_unit_vector_and_similar_code_is_closer() -> None:
    e = HashingEmbedder(256)
    a, b, c = e.embed([CODE, CODE.replace("name", "title"), "function total(items) { return items.length; }"])
    dot = lambda u, v: sum(x * y for x, y in zip(u, v, strict=True))  # noqa: E731
    assert abs(dot(a, a) - 1.0) < 1e-9
    assert dot(a, b) > dot(a, c)


def test_memory_embed_fills_vectors_once() -> None:
    m = Memory([example_from_record(record(), y=1, code=CODE, start_line=1, source="seed", group="g")])
    assert m.embed(HashingEmbedder(32)) == 1 and m.embed(HashingEmbedder(32)) == 0
    assert m.vector(m.examples[0]) is not None and m.embedding_model == "local/hashed-ngrams-v1-32"
