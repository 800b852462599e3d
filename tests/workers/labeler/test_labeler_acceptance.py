"""The acceptance rule on the documented cases (docs/loop.md): fragments split at the cut mark, quotes read
raw or with the JSON line's escapes decoded, quotes lifted from the ticket, reproduction through a registered
miner."""

from __future__ import annotations

import json
from pathlib import Path

from ouroboros_gates.schemas import Acceptance, CorpusKind, Span
from ouroboros_gates.workers.labeler import CUT, decode_escapes, fragments, judge, lifted, miner_reproducer
from ouroboros_gates.workers.labeler.request import Job

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "runs"
LINE = (
    '{"type": "tool_use", "name": "Bash", "input": {"command": "pkill -f \\"pytest -k slow\\"; sleep 1"}, '
    '"content": "Exit code 143\\nTerminated"}'
)
TICKET = "Miner: pgrep -f / pkill -f that match their own shell. `pkill -f PATTERN` kills the tool's shell."


def _judge(quote: str, line: str | None = LINE, positive: bool = True) -> tuple[Acceptance, str]:
    verdict = judge(positive, quote, "run-1", Span(file="run-1.jsonl", line=7), line, TICKET)
    return verdict.acceptance, verdict.why


def test_a_quote_verbatim_on_its_line_is_accepted() -> None:
    assert _judge('"name": "Bash"')[0] is Acceptance.ACCEPTED


def test_fragments_split_at_the_cut_mark_must_be_on_the_line_in_order() -> None:
    assert fragments(f"{CUT}pkill -f {CUT} sleep 1{CUT}") == ["pkill -f", "sleep 1"]
    accepted, why = _judge(f'"name": "Bash"{CUT}sleep 1')
    assert accepted is Acceptance.ACCEPTED and "(2)" in why
    rejected, why = _judge(f'sleep 1{CUT}"name": "Bash"')
    assert rejected is Acceptance.REJECTED and why == "the quote's fragments are on line 7 but not in order"


def test_a_quote_with_the_escapes_decoded_is_accepted_and_so_is_one_as_written() -> None:
    decoded, why = _judge('pkill -f "pytest -k slow"; sleep 1')
    assert decoded is Acceptance.ACCEPTED and "JSON escapes decoded" in why
    raw, why = _judge('pkill -f \\"pytest -k slow\\"')
    assert raw is Acceptance.ACCEPTED and "decoded" not in why
    newline, _ = _judge("Exit code 143\nTerminated")
    assert newline is Acceptance.ACCEPTED
    assert decode_escapes("a\\u00e9\\/b\\\\") == "aé/b\\"


def test_a_quote_that_is_not_on_the_line_is_rejected_with_the_missing_fragment() -> None:
    acceptance, why = _judge(f"pkill -f {CUT}Exit code 137")
    assert acceptance is Acceptance.REJECTED and why == "not on line 7: 'Exit code 137'"


def test_a_quote_lifted_from_the_tickets_own_words_fails_even_when_it_is_on_the_line() -> None:
    line = "the brief says: `pkill -f PATTERN` kills the tool's shell."
    acceptance, why = _judge("`pkill -f PATTERN` kills the tool's shell.", line=line)
    assert acceptance is Acceptance.REJECTED and why == "the quote is lifted from the ticket's own words"
    assert lifted("pkill  -f\nPATTERN", TICKET)  # whitespace does not hide it
    assert not lifted('pkill -f "pytest -k slow"', TICKET)


def test_negatives_are_unchecked_and_empty_or_missing_lines_are_rejected() -> None:
    assert _judge("anything at all", positive=False)[0] is Acceptance.UNCHECKED
    assert _judge(f" {CUT} ") == (Acceptance.REJECTED, "the quote is empty")
    assert _judge("sleep 1", line=None) == (Acceptance.REJECTED, "run-1 has no line 7")


def test_with_a_registered_miner_a_positive_stands_only_where_its_facts_name_the_instance() -> None:
    runs = {path.parent.name: path for path in sorted(EXAMPLES.glob("*/events.jsonl"))}
    job = Job(44, None, "self-match", (CorpusKind.JSONL,), (), "", "", (), TICKET)
    reproduce, how = miner_reproducer(job, runs)
    assert reproduce is not None and how == "labels are checked by miner self-match"
    run = "3e7b1f5d-9c2a-4d84-a6f3-8b0e5d2c7a41"
    log = str(runs[run])
    yes = judge(True, "any quote", run, Span(file=log, line=27), "a line", TICKET, reproduce)
    assert yes.acceptance is Acceptance.ACCEPTED and f"name {run} at line 27" in yes.why
    other = judge(True, "any quote", run, Span(file=log, line=2), "a line", TICKET, reproduce)
    assert other.acceptance is Acceptance.REJECTED and "not at line 2" in other.why
    clean_run = "9d41b7a3-0e5f-4a82-b6c9-3f7e1d2a5c60"
    clean = judge(
        True, "any quote", clean_run, Span(file=str(runs[clean_run]), line=9), "a line", TICKET, reproduce
    )
    assert clean.acceptance is Acceptance.REJECTED and "do not name" in clean.why


def test_a_label_on_a_subagents_line_is_reproduced_in_that_file_only(tmp_path: Path) -> None:
    def call(command: str, **extra: object) -> str:
        use = {
            "type": "tool_use",
            "id": f"toolu_{len(command)}",
            "name": "Bash",
            "input": {"command": command},
        }
        body = {"id": f"m-{command}", "role": "assistant", "content": [use]}
        doc = {"type": "assistant", "sessionId": "s-1", "uuid": command, "message": body, **extra}
        return json.dumps(doc) + "\n"

    main = tmp_path / "s-1.jsonl"
    main.write_text(call("ls") + call("pkill -f pytest"))  # the offense on line 2 of the main transcript
    agent = tmp_path / "s-1" / "subagents" / "agent-a1.jsonl"
    agent.parent.mkdir(parents=True)
    agent.write_text(
        call("make", isSidechain=True, agentId="a1") + call("git status", isSidechain=True, agentId="a1")
    )
    job = Job(44, None, "self-match", (CorpusKind.JSONL,), (), "", "", (), TICKET)
    reproduce, _how = miner_reproducer(job, {"s-1": main})
    assert reproduce is not None
    on_main = judge(True, "pkill -f pytest", "s-1", Span(file=str(main), line=2), "a line", TICKET, reproduce)
    assert on_main.acceptance is Acceptance.ACCEPTED
    on_agent = judge(True, "git status", "s-1", Span(file=str(agent), line=2), "a line", TICKET, reproduce)
    assert (
        on_agent.acceptance is Acceptance.REJECTED
        and f"other files of the run, not in {agent}" in on_agent.why
    )


def test_an_unregistered_miner_falls_back_to_the_quote_rule() -> None:
    job = Job(48, None, "cache-ratio", (CorpusKind.JSONL,), (), "", "", (), "")
    reproduce, how = miner_reproducer(job, {})
    assert (
        reproduce is None and how == "miner cache-ratio is not registered: labels are checked by their quotes"
    )
