"""Classify(k) against the scripted model server (real HTTP on 127.0.0.1): temperatures per sample, the
majority and the score, the parse retry, budget exhaustion mid-run, the deadline, the bound on requests in
flight, and byte-identical replay from the response cache at $0."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from _decider_support import item

from ouroboros_gates.decider.classify import classify_all, majority, vote_score
from ouroboros_gates.decider.excerpt import make_excerpt
from ouroboros_gates.decider.program import Answer, CandidateView, OperatingPoint, Program, render_signals
from ouroboros_gates.llm import (
    ChatClient,
    ChatReply,
    ChatRequest,
    Endpoint,
    MeteredClient,
    ResponseCache,
    load_manifest,
)

PROGRAM = Program(
    kind="llm-program",
    k=3,
    operating_points={"*": OperatingPoint(advisory=0.3, block=0.9, block_offered=True)},
)


def answer(verdict: str, confidence: float, line: int = 11) -> dict[str, Any]:
    return {
        "verdict": verdict,
        "family": "sql_injection",
        "confidence": confidence,
        "rationale": f"Line {line} builds the query from q.",
        "cited_lines": [line],
    }


def view(function: str = "search") -> CandidateView:
    a = item(function)
    return CandidateView(
        make_excerpt(a.code, a.start_line, "python"),
        render_signals(a.record.x, a.record.instruments),
        (),
        "sql_injection",
    )


def client(server: Any, cache: Path | None = None, **ceilings: Any) -> MeteredClient:
    endpoint = Endpoint("openai", server.url + "/v1", "local")
    return MeteredClient(
        ChatClient(endpoint),
        load_manifest("local"),
        cache=ResponseCache(cache) if cache else None,
        **ceilings,
    )


def chats(server: Any) -> list[dict[str, Any]]:
    return [r["body"] for r in server.requests if r["path"] == "/v1/chat/completions"]


def test_majority_and_score() -> None:
    v, n, u = (
        Answer("vulnerable", "x", 0.9, "r", (1,)),
        Answer("not_vulnerable", "x", 0.8, "r", (1,)),
        Answer("unsure", "x", 0.4, "r", (1,)),
    )
    assert majority([v, v, n]) == "vulnerable" and majority([v, n]) == "unsure" and majority([]) == "unsure"
    assert vote_score([v, n, u]) == pytest.approx((0.9 + 0.2 + 0.5) / 3)


def test_sample_one_at_zero_the_others_at_point_seven(model_server: Any) -> None:
    model_server.script(
        [{"call": 1, "content": answer("not_vulnerable", 0.6)}],
        default={"content": answer("vulnerable", 0.9)},
    )
    (got,) = classify_all(PROGRAM, [(view(), [])], client(model_server))
    temperatures = sorted(body["temperature"] for body in chats(model_server))
    assert temperatures == [0.0, 0.7, 0.7]
    assert (
        got is not None
        and got.verdict == "vulnerable"
        and got.votes == {"not_vulnerable": 1, "vulnerable": 2}
    )
    assert got.score == pytest.approx((0.9 + 0.9 + 0.4) / 3) and got.cited_lines == (11,)


def test_a_reply_that_does_not_parse_is_asked_again_once_then_parse_failed(model_server: Any) -> None:
    one = Program(kind="llm-program", k=1)
    model_server.script(
        [{"contains": "search", "malformed": True, "times": 1}],
        default={"content": answer("vulnerable", 0.7)},
    )
    (got,) = classify_all(one, [(view("search"), [])], client(model_server))
    assert got is not None and got.verdict == "vulnerable" and len(chats(model_server)) == 2
    assert chats(model_server)[1]["temperature"] == 0.0
    model_server.script([{"content": answer("vulnerable", 0.7, line=99)}])  # cites no line shown, twice
    (bad,) = classify_all(one, [(view("lookup"), [])], client(model_server))
    assert bad is not None and bad.verdict == "unsure" and bad.parse_failed and bad.score == 0.5


def test_budget_exhaustion_mid_run_marks_the_rest(model_server: Any) -> None:
    model_server.script([], default={"content": answer("vulnerable", 0.9)})
    one = Program(kind="llm-program", k=1)
    views = [view(f"f{i}") for i in range(4)]
    got = classify_all(one, [(v, []) for v in views], client(model_server, call_ceiling=2), max_in_flight=1)
    failures = [g.failure.reason if g and g.failure else None for g in got]
    assert failures == [None, None, "budget_exhausted", "budget_exhausted"]


def test_a_candidate_not_answered_by_the_deadline_is_none(model_server: Any) -> None:
    model_server.script(
        [{"contains": "slow", "delay_s": 2.0, "content": answer("vulnerable", 0.9)}],
        default={"content": answer("vulnerable", 0.9)},
    )
    one = Program(kind="llm-program", k=1)
    got = classify_all(
        one, [(view("fast"), []), (view("slow"), [])], client(model_server), deadline=time.monotonic() + 1.0
    )
    assert got[0] is not None and got[1] is None


class Counting:
    """A chat client that counts requests in flight."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.now, self.most = inner, 0, 0
        self.lock = threading.Lock()

    def chat(self, request: ChatRequest) -> ChatReply:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        try:
            return self.inner.chat(request)  # type: ignore[no-any-return]
        finally:
            with self.lock:
                self.now -= 1


def test_at_most_eight_requests_in_flight(model_server: Any) -> None:
    model_server.script([], default={"content": answer("vulnerable", 0.9), "delay_s": 0.1})
    counting = Counting(client(model_server))
    got = classify_all(Program(kind="llm-program", k=5), [(view(f"f{i}"), []) for i in range(4)], counting)
    assert all(g is not None for g in got) and len(chats(model_server)) == 20
    assert 1 < counting.most <= 8


def test_replay_from_the_cache_is_byte_identical_at_no_cost(model_server: Any, tmp_path: Path) -> None:
    model_server.script(
        [{"call": 2, "content": answer("not_vulnerable", 0.7)}],
        default={"content": answer("vulnerable", 0.8)},
    )
    items = [(view("a"), []), (view("b"), [])]
    first = classify_all(PROGRAM, items, client(model_server, tmp_path))
    asked = len(chats(model_server))
    metered = client(model_server, tmp_path)
    again = classify_all(PROGRAM, items, metered)
    assert again == [
        g and g.__class__(**{**g.__dict__, "cached": True, "usd": 0.0, "calls": 0}) for g in first
    ]
    assert len(chats(model_server)) == asked and metered.spent_usd == 0.0
