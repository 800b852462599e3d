"""Decide: operating points (unsure never BLOCKs), the memory vote at $0, the LM program against the
scripted server, the fallback line with its reason, the program lookup order, and user adaptation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _decider_support import COLUMNS, item, memory

from ouroboros_gates.decider.adapt import MIN_USER_EXAMPLES, dismiss, dismissals, user_memory
from ouroboros_gates.decider.assemble import find_program, repo_group
from ouroboros_gates.decider.decide import Engine, decide_all, fallback_line, operating_point, platt
from ouroboros_gates.decider.memory import Memory, MemoryRefused, MemoryStore
from ouroboros_gates.decider.program import OperatingPoint, Program
from ouroboros_gates.decider.repos import normalise_repo
from ouroboros_gates.events import SideTables, ensure_schema, make_engine
from ouroboros_gates.llm import ChatClient, Endpoint, MeteredClient, load_manifest
from ouroboros_gates.schemas import Action, Undecided
from ouroboros_gates.schemas.settings import Settings

BLOCKING = Program(
    kind="llm-program",
    k=1,
    operating_points={"*": OperatingPoint(advisory=0.4, block=0.85, block_offered=True)},
)


def answer(verdict: str, confidence: float) -> dict[str, Any]:
    return {
        "verdict": verdict,
        "family": "sql_injection",
        "confidence": confidence,
        "rationale": "Line 11 builds SQL from q; qr.enabled_hits agrees.",
        "cited_lines": [11],
    }


def llm_engine(server: Any, program: Program = BLOCKING, **ceilings: Any) -> Engine:
    metered = MeteredClient(
        ChatClient(Endpoint("openai", server.url + "/v1", "local")), load_manifest("local"), **ceilings
    )
    return Engine(
        program=program,
        memory=memory(),
        columns=COLUMNS,
        client=metered,
        model="local",
        spent=lambda: (metered.spent_usd, metered.calls),
    )


def test_operating_points_and_unsure_never_blocks() -> None:
    assert operating_point(0.9, "vulnerable", BLOCKING, "xss") == (Action.BLOCK, True)
    assert operating_point(0.9, "unsure", BLOCKING, "xss") == (Action.ADVISORY, True)
    assert operating_point(0.2, "not_vulnerable", BLOCKING, "xss") == (Action.DROP, True)
    assert operating_point(0.5, "vulnerable", Program(kind="llm-program"), "xss") is None
    assert platt(0.7, None) == 0.7 and platt(0.5, (1.0, 0.0)) == pytest.approx(0.5)


def test_the_memory_vote_decides_at_no_cost_and_says_so() -> None:
    vote = Program(kind="memory-vote", operating_points={"*": OperatingPoint(advisory=0.5)})
    run = decide_all([item("search", hits=1), item("safe", hits=0)], Engine(vote, memory(), COLUMNS))
    hot, cold = run.decided
    assert run.variant == "memory-vote" and run.usd == 0 and run.fallback is None
    assert hot.decision.action is Action.ADVISORY and hot.decision.verdict == "vulnerable"
    assert cold.decision.action is Action.DROP and cold.decision.verdict == "not_vulnerable"
    assert hot.decision.retrieval == "signals_only" and hot.decision.model is None
    assert "Memory vote" in hot.decision.rationale and hot.decision.cited_lines == (11,)
    assert hot.decision.signals == ("py-sql-fstring",)  # named in the rationale and present in the record


def test_other_families_inform_the_vote_but_never_outvote_the_candidates_own() -> None:
    vote = Program(kind="memory-vote", operating_points={"*": OperatingPoint(advisory=0.5)})
    own_safe = [e for e in memory(2, family="insecure_temp_file").examples if e.y == 0]
    others = [e for e in memory(12).examples if e.y == 1]  # six sql_injection positives, just as near
    run = decide_all(
        [item("search", hits=0, family="insecure_temp_file")],
        Engine(vote, Memory([*own_safe, *others]), COLUMNS),
    )
    (d,) = run.decided
    assert d.neighbours["family"] == {"insecure_temp_file": 1, "sql_injection": 5}
    assert d.raw_score is not None and d.raw_score < 0.5 and d.decision.verdict == "not_vulnerable"
    # the words count as the weights do: five vulnerable voters of six, yet the verdict follows the one
    assert d.decision.rationale.startswith(
        "Memory vote: the nearest labelled insecure_temp_file example is not vulnerable; other families, "
        "together "
        "weighing at most 0.5x as much: 5 of 5 vulnerable (sql_injection 5); retrieval "
    )
    alone = decide_all([item("search", hits=1, family="xxe")], Engine(vote, Memory(others), COLUMNS)).decided[
        0
    ]
    assert alone.raw_score is not None and 0.5 < alone.raw_score <= 2 / 3  # no own family: informs, bounded
    assert (
        "no labelled xxe example is near; other families, together weighing at most 0.5x as much as the "
        "prior: 6 of 6 vulnerable (sql_injection 6)" in alone.decision.rationale
    )


def test_the_lm_program_blocks_and_names_only_signals_the_record_has(model_server: Any) -> None:
    model_server.script(
        [
            {"contains": "def safe", "content": answer("not_vulnerable", 0.9)},
            {"contains": "def odd", "content": answer("unsure", 0.95)},
        ],
        default={"content": answer("vulnerable", 0.95)},
    )
    run = decide_all([item("search"), item("safe"), item("odd")], llm_engine(model_server))
    actions = [d.decision.action for d in run.decided]
    assert actions == [Action.BLOCK, Action.DROP, Action.ADVISORY]
    blocked = run.decided[0].decision
    assert blocked.p == pytest.approx(0.95) and blocked.offered and blocked.variant == "llm-program"
    assert blocked.signals == ("qr.enabled_hits",) and blocked.model
    system = [r["body"]["messages"][0]["content"] for r in model_server.requests if r["method"] == "POST"]
    assert len(set(system)) == 1  # one shared prefix for every candidate


def test_a_parse_failed_majority_is_never_dropped(model_server: Any) -> None:
    model_server.script([], default={"malformed": True})
    run = decide_all([item("search")], llm_engine(model_server))
    (d,) = run.decided
    assert run.fallback == "instrument failure: 1 of 1 answers parse_failed"  # more than 5%: not a result
    assert d.decision.action is Action.ADVISORY and d.decision.undecided is Undecided.PARSE_FAILED
    assert d.parse_failed and d.decision.verdict == "unsure"


def test_budget_exhausted_falls_back_with_the_reason(model_server: Any) -> None:
    model_server.script([], default={"content": answer("vulnerable", 0.95)})
    run = decide_all([item("a"), item("b")], llm_engine(model_server, call_ceiling=1))
    # One call is allowed: whichever candidate reserved it first is decided, the other falls back.
    undecided = [d.decision for d in run.decided if d.decision.undecided is not None]
    assert [d.undecided for d in undecided] == [Undecided.BUDGET_EXHAUSTED]
    assert undecided[0].rationale == fallback_line("budget exhausted") and run.fallback == "budget exhausted"
    assert "budget exhausted" in fallback_line("budget exhausted") and "today's rule output" in fallback_line(
        "x"
    )


def test_undecided_by_the_deadline_is_advisory_unscored(model_server: Any) -> None:
    model_server.script([], default={"content": answer("vulnerable", 0.95), "delay_s": 1.5})
    import time

    (d,) = decide_all([item("a")], llm_engine(model_server), deadline=time.monotonic() + 0.3).decided
    assert d.decision.action is Action.ADVISORY and d.decision.p is None
    assert d.decision.undecided is Undecided.DEADLINE


def test_no_program_is_the_fallback_line() -> None:
    run = decide_all([item("a")], Engine(None, memory(), COLUMNS))
    assert run.fallback == "no adopted program"
    assert run.decided[0].decision.rationale.startswith("decision engine: not used (no adopted program)")


def test_lookup_order_setting_then_store_then_packaged(tmp_path: Path, sqlite_url: str) -> None:
    engine = make_engine(sqlite_url)
    ensure_schema(engine)
    store = MemoryStore(SideTables(engine))
    settings = Settings(state=tmp_path)
    assert find_program(settings, store, chat=False).program.kind == "memory-vote"  # type: ignore[union-attr]
    packaged = find_program(settings, store, chat=True)
    assert packaged.source == "packaged" and packaged.program.kind == "llm-program"  # type: ignore[union-attr]
    store.put_program(BLOCKING.to_json(), BLOCKING.program_id, "static", adopt=True)
    assert find_program(settings, store, chat=True).source == "store"
    no_chat = find_program(settings, store, chat=False)
    assert no_chat.program.kind == "memory-vote" and "no chat model configured" in no_chat.note  # type: ignore[union-attr]
    path = tmp_path / "mine.json"
    path.write_text(Program(kind="llm-program", k=5).to_json())
    chosen = find_program(Settings(state=tmp_path, decider_program=path), store, chat=True)
    assert chosen.source == "setting" and chosen.program.k == 5  # type: ignore[union-attr]
    assert repo_group("https://github.com/Acme/Shop.git") == "acme/shop"
    assert (
        repo_group("git@github.com:Acme/Shop.git") == repo_group("acme/shop") == normalise_repo("Acme/Shop")
    )


def test_dismissals_stay_in_the_repository_and_form_a_user_memory_at_ten(
    tmp_path: Path, sqlite_url: str
) -> None:
    from ouroboros_gates.decider.report import finding

    vote = Program(kind="memory-vote", operating_points={"*": OperatingPoint(advisory=0.1)})
    run = decide_all([item(f"f{i}") for i in range(MIN_USER_EXAMPLES)], Engine(vote, memory(), COLUMNS))
    for d in run.decided[: MIN_USER_EXAMPLES - 1]:
        dismiss(tmp_path, finding(d), run.program_id)
    assert len(user_memory(dismissals(tmp_path))) == 0  # below ten: suppression only
    dismiss(tmp_path, finding(run.decided[-1]), run.program_id)
    local = user_memory(dismissals(tmp_path))
    assert len(local) == MIN_USER_EXAMPLES and {e.origin for e in local.examples} == {"user"}
    assert {e.y for e in local.examples} == {0}
    engine = make_engine(sqlite_url)
    ensure_schema(engine)
    with pytest.raises(MemoryRefused):
        MemoryStore(SideTables(engine)).save(local)
    from ouroboros_gates.decider.decide import dismiss as suppress

    kept = suppress(run, {d["fingerprint"] for d in dismissals(tmp_path)})
    assert all(d.dismissed and d.decision.action is Action.DROP for d in kept.decided)


def test_embeddings_from_the_endpoint_rerank_and_a_failure_says_signals_only(
    model_server: Any, sqlite_url: str
) -> None:
    from ouroboros_gates.decider.embed import CachedEmbedder, ModelEmbedder
    from ouroboros_gates.llm import EmbeddingClient

    engine = make_engine(sqlite_url)
    ensure_schema(engine)
    client = EmbeddingClient(Endpoint("openai", model_server.url + "/v1", "fake-embed"))
    embedder = CachedEmbedder(ModelEmbedder("fake-embed", client.embed), MemoryStore(SideTables(engine)))
    vote = Program(kind="memory-vote", operating_points={"*": OperatingPoint(advisory=0.5)})
    mem = memory()
    mem.embed(embedder)
    run = decide_all([item("search")], Engine(vote, mem, COLUMNS, embedder=embedder))
    assert run.decided[0].decision.retrieval == "signals+embeddings"
    asked = [r for r in model_server.requests if r["path"] == "/v1/embeddings"]
    assert (
        asked
        and len(
            MemoryStore(SideTables(engine)).get_embeddings(
                "fake-embed", [e.embedding_key for e in mem.examples]
            )
        )
        == 8
    )
    model_server.script([{"path": "/v1/embeddings", "status": 500}])
    broken = CachedEmbedder(
        ModelEmbedder(
            "fake-embed", EmbeddingClient(Endpoint("openai", model_server.url + "/v1", "fake-embed")).embed
        )
    )
    failed = decide_all([item("other")], Engine(vote, mem, COLUMNS, embedder=broken))
    assert failed.decided[0].decision.retrieval == "signals_only"


def test_build_engine_reads_the_embedding_endpoint_from_the_settings(
    model_server: Any, tmp_path: Path, sqlite_url: str
) -> None:
    from ouroboros_gates.decider.assemble import build_engine

    engine = make_engine(sqlite_url)
    ensure_schema(engine)
    settings = Settings(
        state=tmp_path, embed_model="fake-embed", embed_api="openai", embed_url=model_server.url + "/v1"
    )
    built, lookup = build_engine(
        settings, "acme/shop", store=MemoryStore(SideTables(engine)), memory=memory()
    )
    assert lookup.program is not None and lookup.program.kind == "memory-vote" and built.embedder is not None
    built.columns, built.validate = COLUMNS, None  # hand-made records: not of the real feature set
    run = decide_all([item("search")], built)
    assert run.decided[0].decision.retrieval == "signals+embeddings" and run.variant == "memory-vote"
    assert any(r["path"] == "/v1/embeddings" for r in model_server.requests)
