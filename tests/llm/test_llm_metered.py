"""The metered client: ceilings reserved before each call (never passed by concurrent callers), costs from the
manifest, the smoke check's working-looking zero, and the response cache's byte-identical replay at $0."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ouroboros_gates.llm import (
    AccountError,
    BudgetExhausted,
    ChatClient,
    ChatReply,
    ChatRequest,
    Endpoint,
    MeteredClient,
    Prices,
    ReplyParseError,
    ResponseCache,
    TransientLlmError,
    Usage,
    cache_key,
    load_manifest,
    run_bounded,
)

# prices of their own, so that a price change in ruleset/models changes no test
DEEPSEEK = replace(
    load_manifest("deepseek-chat"), prices=Prices(input=0.28, cache_read=0.028, cache_write=0.28, output=0.42)
)
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def client(server: Any, api: str = "openai") -> ChatClient:
    base = f"{server.url}/v1" if api == "openai" else server.url
    return ChatClient(Endpoint(api=api, base_url=base, model="fake-model"))  # type: ignore[arg-type]


def ask(i: int, **kw: Any) -> ChatRequest:
    return ChatRequest(messages=({"role": "user", "content": f"candidate {i}"},), **kw)


class Fixed:
    """A chat client with fixed usage that counts how many calls run at once."""

    def __init__(self, usage: Usage, text: str = "ok") -> None:
        self.usage, self.text = usage, text
        self.now = self.peak = self.calls = 0
        self.lock = threading.Lock()
        self.gate = threading.Event()

    def chat(self, request: ChatRequest) -> ChatReply:
        with self.lock:
            self.now += 1
            self.calls += 1
            self.peak = max(self.peak, self.now)
        self.gate.wait(0.05)
        with self.lock:
            self.now -= 1
        return ChatReply(text=self.text, data=None, usage=self.usage, model="m")


def test_cost_is_priced_from_the_manifest_per_usage_kind(model_server: Any) -> None:
    model_server.script(
        [{"usage": {"prompt_tokens": 10_000, "prompt_cache_hit_tokens": 8_000, "completion_tokens": 1_000}}]
    )
    metered = MeteredClient(client(model_server), DEEPSEEK, usd_ceiling=1.0, call_ceiling=10, cache=None)
    reply = metered.chat(ask(1))
    expected = (2_000 * 0.28 + 8_000 * 0.028 + 1_000 * 0.42) / 1e6
    assert reply.cost_usd == pytest.approx(expected) and metered.spent_usd == pytest.approx(expected)
    assert (metered.calls, metered.cache_hits) == (1, 0)
    assert metered.usage == Usage(2_000, 8_000, 0, 1_000)


def test_a_local_model_costs_nothing_and_reports_its_load(model_server: Any) -> None:
    metered = MeteredClient(client(model_server, "ollama"), load_manifest("qwen3:8b"), usd_ceiling=0.0)
    reply = metered.chat(ask(1))
    assert reply.cost_usd == 0.0 and reply.load_s == pytest.approx(2.4) and metered.calls == 1


def test_the_call_ceiling_stops_before_sending(model_server: Any) -> None:
    metered = MeteredClient(client(model_server), DEEPSEEK, usd_ceiling=None, call_ceiling=2, cache=None)
    metered.chat(ask(1))
    metered.chat(ask(2))
    with pytest.raises(BudgetExhausted, match="calls ceiling reached: spent 2 of 2") as caught:
        metered.chat(ask(3))
    assert (caught.value.kind, caught.value.spent, caught.value.ceiling) == ("calls", 2, 2)
    assert len(model_server.calls()) == 2


def test_the_usd_ceiling_stops_before_the_call_that_could_pass_it(model_server: Any) -> None:
    request = ask(1, max_tokens=1_000)
    metered = MeteredClient(client(model_server), DEEPSEEK, usd_ceiling=None, call_ceiling=None, cache=None)
    worst = metered.worst_case_usd(request)
    capped = MeteredClient(
        client(model_server), DEEPSEEK, usd_ceiling=worst * 0.99, call_ceiling=None, cache=None
    )
    with pytest.raises(BudgetExhausted, match="usd ceiling reached") as caught:
        capped.chat(request)
    assert caught.value.kind == "usd" and model_server.calls() == []


@pytest.mark.parametrize("ceiling", ["usd", "calls"])
def test_concurrent_callers_never_pass_a_ceiling(ceiling: str) -> None:
    fake = Fixed(Usage(input_tokens=40, output_tokens=100))
    probe = MeteredClient(fake, DEEPSEEK, usd_ceiling=None, call_ceiling=None, cache=None)
    worst = probe.worst_case_usd(ask(0, max_tokens=100))
    usd, calls = (worst * 7.5, None) if ceiling == "usd" else (None, 7)
    metered = MeteredClient(fake, DEEPSEEK, usd_ceiling=usd, call_ceiling=calls, cache=None)
    outcomes = run_bounded(
        [lambda i=i: metered.chat(ask(i, max_tokens=100)) for i in range(40)], 8, return_exceptions=True
    )
    done = [o for o in outcomes if isinstance(o, ChatReply)]
    refused = [o for o in outcomes if isinstance(o, BudgetExhausted)]
    assert len(done) + len(refused) == 40 and refused and fake.calls == metered.calls == len(done)
    assert fake.peak > 1  # the calls really overlapped
    if ceiling == "usd":
        assert metered.spent_usd <= usd  # type: ignore[operator]
        assert len(done) >= 7  # seven worst cases fit at once; settled calls may leave room for more
    else:
        assert len(done) == 7


def test_a_budget_exhausted_mid_run_keeps_what_was_done(model_server: Any) -> None:
    model_server.script([], default={"delay_s": 0.05})
    metered = MeteredClient(client(model_server), DEEPSEEK, usd_ceiling=None, call_ceiling=5, cache=None)
    outcomes = run_bounded([lambda i=i: metered.chat(ask(i)) for i in range(12)], 8, return_exceptions=True)
    assert sum(isinstance(o, ChatReply) for o in outcomes) == 5 == len(model_server.calls())
    assert all(isinstance(o, BudgetExhausted) for o in outcomes if not isinstance(o, ChatReply))
    with pytest.raises(BudgetExhausted):
        run_bounded([lambda: metered.chat(ask(99))])


@pytest.mark.parametrize("usage", ["zero", "none"])
@pytest.mark.parametrize("api", ["openai", "ollama"])
def test_a_working_looking_zero_stops_the_run(model_server: Any, usage: str, api: str) -> None:
    model_server.script([{"usage": usage}])
    metered = MeteredClient(
        client(model_server, api), DEEPSEEK, usd_ceiling=1.0, call_ceiling=None, cache=None
    )
    with pytest.raises(AccountError, match="a working-looking zero: deepseek-chat replied 2 characters"):
        metered.smoke()
    with pytest.raises(AccountError, match="a working-looking zero"):
        metered.chat(ask(1))


def test_text_without_output_tokens_is_a_working_looking_zero(model_server: Any) -> None:
    model_server.script([{"usage": {"completion_tokens": 0}}])
    metered = MeteredClient(client(model_server), DEEPSEEK, usd_ceiling=1.0, call_ceiling=None, cache=None)
    with pytest.raises(AccountError, match="working-looking zero"):
        metered.smoke()


def test_the_smoke_check_passes_on_real_usage(model_server: Any) -> None:
    metered = MeteredClient(client(model_server), DEEPSEEK, usd_ceiling=1.0, call_ceiling=None, cache=None)
    reply = metered.smoke()
    assert reply.usage.input_tokens > 0 and reply.cost_usd > 0 and metered.calls == 1


def test_a_failed_call_releases_its_reservation(model_server: Any) -> None:
    model_server.script([{"status": 503, "times": 1}])
    metered = MeteredClient(client(model_server), DEEPSEEK, usd_ceiling=None, call_ceiling=None, cache=None)
    request = ask(1, max_tokens=100)
    capped = MeteredClient(
        metered.client,
        DEEPSEEK,
        usd_ceiling=metered.worst_case_usd(request) * 1.5,
        call_ceiling=None,
        cache=None,
    )
    with pytest.raises(TransientLlmError):
        capped.chat(request)
    assert capped.chat(request).text == "ok" and capped.calls == 2


@pytest.mark.parametrize("api", ["openai", "ollama"])
def test_the_cache_replays_byte_for_byte_at_no_cost(model_server: Any, tmp_path: Path, api: str) -> None:
    model_server.script([{"content": '{"n":  7 }'}])
    cache = ResponseCache(tmp_path / "responses")
    first = MeteredClient(client(model_server, api), DEEPSEEK, usd_ceiling=1.0, call_ceiling=1, cache=cache)
    paid = first.chat(ask(1, schema=SCHEMA))
    again = MeteredClient(client(model_server, api), DEEPSEEK, usd_ceiling=0.0, call_ceiling=0, cache=cache)
    replay = again.chat(ask(1, schema=SCHEMA))
    assert replay.text == paid.text == '{"n":  7 }' and replay.data == {"n": 7} == paid.data
    assert (replay.cached, replay.cost_usd, paid.cached) == (True, 0.0, False) and paid.cost_usd > 0
    assert replay.usage == paid.usage and (again.cache_hits, again.calls, again.spent_usd) == (1, 0, 0.0)
    assert len(model_server.calls()) == 1 and len(cache) == 1


def test_every_part_of_the_key_matters() -> None:
    base = ask(1, schema=SCHEMA)
    variants = [
        ask(2, schema=SCHEMA),
        ask(1),
        ask(1, schema=SCHEMA, temperature=0.7),
        ask(1, schema=SCHEMA, sample=1),
        ask(1, schema=SCHEMA, max_tokens=9),
        ask(1, schema={"type": "object"}),
        ask(1, schema=SCHEMA, attempt=1),
    ]
    keys = {cache_key("deepseek-chat", r) for r in [base, *variants]} | {cache_key("qwen3:8b", base)}
    assert len(keys) == 9 and cache_key("deepseek-chat", base) == cache_key(
        "deepseek-chat", ask(1, schema=SCHEMA)
    )


def test_cache_writes_are_atomic_and_a_torn_file_is_a_miss(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    reply = ChatReply(text="é ok", data=None, usage=Usage(1, 2, 3, 4), model="m", cost_usd=0.5, wall_s=1.0)
    cache.put("ab" * 32, reply)
    assert not list(tmp_path.rglob("*.tmp"))
    assert cache.get("ab" * 32) == ChatReply(
        text="é ok", data=None, usage=Usage(1, 2, 3, 4), model="m", cached=True
    )
    cache.path("cd" * 32).parent.mkdir(parents=True)
    cache.path("cd" * 32).write_text('{"text": "half')
    assert cache.get("cd" * 32) is None and cache.get("ef" * 32) is None


def test_a_reply_that_does_not_parse_is_paid_cached_and_replayed_as_the_same_failure(
    model_server: Any, tmp_path: Path
) -> None:
    model_server.script([{"call": 0, "malformed": True}], default={"content": {"n": 3}})
    cache = ResponseCache(tmp_path)
    metered = MeteredClient(client(model_server), DEEPSEEK, usd_ceiling=1.0, call_ceiling=None, cache=cache)
    with pytest.raises(ReplyParseError, match="not JSON") as first:
        metered.chat(ask(1, schema=SCHEMA))
    paid = first.value.reply
    assert (
        paid is not None and paid.cost_usd > 0 and metered.spent_usd == paid.cost_usd and metered.calls == 1
    )
    with pytest.raises(ReplyParseError, match="not JSON") as again:
        metered.chat(ask(1, schema=SCHEMA))
    assert again.value.reply is not None and again.value.reply.cached and again.value.text == first.value.text
    assert metered.calls == 1 and metered.cache_hits == 1
    retry = metered.chat(ask(1, schema=SCHEMA, attempt=1))
    assert retry.data == {"n": 3} and metered.calls == 2 and len(model_server.calls()) == 2


def test_at_most_eight_requests_reach_the_server_at_once(model_server: Any) -> None:
    model_server.script([], default={"delay_s": 0.05})
    metered = MeteredClient(client(model_server), DEEPSEEK, usd_ceiling=None, call_ceiling=None, cache=None)
    replies = run_bounded([lambda i=i: metered.chat(ask(i)) for i in range(24)])
    assert [r.text for r in replies] == ["ok"] * 24 and metered.calls == 24
    assert 1 < model_server.peak_in_flight <= 8
