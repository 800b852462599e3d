"""Step 3's words: the prompt for one batch of candidates and the JSON the model must answer with.

The instructions come first and never change, so a provider's prompt cache can hold them; the ticket
and its candidates follow. For each candidate the model answers ``+`` or ``-``, a verbatim quote from
the line, a reason, and the line it quotes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ouroboros_gates.llm import ChatRequest, Message
from ouroboros_gates.workers.labeler.prefilter import CUT, Candidate
from ouroboros_gates.workers.labeler.request import Job

__all__ = ["INSTRUCTIONS", "SCHEMA", "Answer", "read_answers", "request_for"]

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "labels": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "candidate": {"type": "integer"},
                    "label": {"type": "string", "enum": ["+", "-"]},
                    "quote": {"type": "string"},
                    "reason": {"type": "string"},
                    "line": {"type": "integer"},
                },
                "required": ["candidate", "label", "quote", "reason", "line"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["labels"],
    "additionalProperties": False,
}
"""The answer's JSON Schema (Ollama's ``format``, OpenAI's ``response_format``)."""

INSTRUCTIONS = f"""You label lines of a corpus for a mining ticket. The ticket describes a predicate: a \
concrete mistake that an AI coding agent made in a run, an issue or a commit. Each candidate is one line \
(instance, source and line number) with an excerpt of it; {CUT} marks where the excerpt leaves text out.

For every candidate answer one object:
- "candidate": its number;
- "label": "+" only when the line is concrete evidence of the predicate happening (the command, the \
error, the result the predicate describes), else "-". A line that merely uses the ticket's vocabulary \
(a brief, a plan, a discussion of the problem, the ticket's own text) is "-";
- "quote": for "+", the shortest text copied verbatim from the line that shows it; keep {CUT} where you \
skip text; for "-", an empty string or the text you looked at;
- "reason": one sentence;
- "line": the line number you quote.
Answer with JSON only: {{"labels": [...]}}."""


@dataclass(frozen=True)
class Answer:
    """The model's label for one candidate."""

    candidate: Candidate
    positive: bool
    quote: str
    reason: str
    line: int


def request_for(job: Job, batch: Sequence[Candidate]) -> ChatRequest:
    """The chat request for one batch of ``job``'s candidates."""
    facts = "\n".join(f"- {fact}" for fact in job.facts) or "- (none given)"
    shown = "\n\n".join(
        f"[{number}] instance {c.instance}, {c.file} line {c.line} (terms: {', '.join(c.terms)})\n{c.excerpt}"
        for number, c in enumerate(batch, start=1)
    )
    ticket = (
        f"Ticket #{job.ticket}\nPredicate:\n{job.predicate}\nFact lines:\n{facts}\n\nCandidates:\n\n{shown}"
    )
    messages: tuple[Message, ...] = (
        {"role": "system", "content": INSTRUCTIONS},
        {"role": "user", "content": ticket},
    )
    return ChatRequest(messages=messages, schema=SCHEMA, temperature=0.0)


def read_answers(data: Any, batch: Sequence[Candidate]) -> tuple[list[Answer], list[str]]:
    """The answers for ``batch`` in a schema-valid reply, and what was wrong with the rest of it."""
    answers: list[Answer] = []
    problems: list[str] = []
    seen: set[int] = set()
    for item in data.get("labels", []) if isinstance(data, dict) else []:
        found = _answer(item, batch, seen)
        if isinstance(found, str):
            problems.append(found)
        else:
            answers.append(found)
    missing = _unanswered(batch, seen)
    if missing:
        problems.append(f"no answer for candidate(s) {', '.join(missing)}")
    return answers, problems


def _unanswered(batch: Sequence[Candidate], seen: set[int]) -> list[str]:
    """The numbers of the candidates no answer named."""
    return [str(n) for n in range(1, len(batch) + 1) if n not in seen]


def _answer(item: Any, batch: Sequence[Candidate], seen: set[int]) -> Answer | str:
    """One item of the reply as the answer for its candidate (from now on, seen), or what is wrong with it;
    a line number that is not one is the candidate's own line."""
    number = item.get("candidate")
    if not isinstance(number, int) or not 1 <= number <= len(batch):
        return f"an answer names candidate {number!r}, not one of 1..{len(batch)}"
    if number in seen:
        return f"candidate {number} is answered twice; the first answer stands"
    seen.add(number)
    candidate = batch[number - 1]
    return Answer(
        candidate=candidate,
        positive=item.get("label") == "+",
        quote=str(item.get("quote") or ""),
        reason=str(item.get("reason") or ""),
        line=_line(item.get("line"), candidate),
    )


def _line(line: Any, candidate: Candidate) -> int:
    """The line an answer quotes; one that is not a line number is the candidate's own line."""
    return line if isinstance(line, int) and line >= 1 else candidate.line
