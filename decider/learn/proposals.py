"""Instruction search (docs/decider.md, "Compile", step 3): one proposal call shown the bootstrap's wrong
answers asks for new instructions; with the baseline they are the configurations scored. A proposal that
drops the answer contract gets it appended."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ouroboros_gates.decider.analyse import Analysed
from ouroboros_gates.decider.decide import Decided
from ouroboros_gates.decider.learn.labels import LabelledUnit
from ouroboros_gates.decider.program import ANSWER_FORMAT, BASELINE_INSTRUCTION, render_signals
from ouroboros_gates.llm import Chat, ChatRequest

__all__ = ["PROPOSAL_SCHEMA", "instructions", "propose"]

PROPOSAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"instructions": {"type": "array", "items": {"type": "string"}}},
    "required": ["instructions"],
}

Answered = tuple[LabelledUnit, Decided, Analysed]
"""A bootstrap answer: the unit, what the program decided, and the unit's record."""


def propose(client: Chat, bootstrap: Sequence[Answered], n: int) -> list[str]:
    """Up to ``n`` instructions proposed by the model from the bootstrap's wrong answers."""
    prompt = "\n".join(
        [
            "Propose instructions for a program that reviews one function for a security defect.",
            "Signature: code, signals, roles, family -> verdict, family, confidence, rationale, cited_lines.",
            "Signals are instrument observations (qr.* quick rules, bandit.* Bandit, facts.* call graph, "
            "roles.* "
            "inferred roles, delta.* the change); 'no coverage' is not 'no finding'.",
            "Answers that were wrong:",
            *(_wrong_answers(bootstrap) or ["- none"]),
            f'Propose {n} different instructions. Answer in JSON: {{"instructions": [..]}}.',
        ]
    )
    request = ChatRequest(messages=({"role": "user", "content": prompt},), schema=PROPOSAL_SCHEMA)
    reply = client.chat(request)
    return [_with_contract(p) for p in _proposals(reply.data)[:n]]


def _wrong_answers(bootstrap: Sequence[Answered]) -> list[str]:
    """A line for each of the first 20 bootstrap answers whose verdict disagrees with the label."""
    return [
        f"- family {u.family}; signals: {_brief(a)}"
        f"; answered {d.decision.verdict}, label {'vulnerable' if u.y else 'not_vulnerable'}"
        for u, d, a in bootstrap
        if (d.decision.verdict == "vulnerable") != bool(u.y)
    ][:20]


def _brief(a: Analysed) -> str:
    """The first six rendered signals of a record, on one line."""
    return "; ".join(render_signals(a.record.x, a.record.instruments).splitlines()[:6])


def _proposals(data: Any) -> list[str]:
    """The non-blank instructions of a proposal reply, whitespace collapsed."""
    found = data.get("instructions", []) if isinstance(data, dict) else []
    return [" ".join(str(t).split()) for t in found if isinstance(t, str) and t.strip()]


def _with_contract(instruction: str) -> str:
    """An instruction that drops the answer contract gets it appended."""
    if re.search(r"\bjson\b", instruction, re.IGNORECASE):
        return instruction
    return f"{instruction}\n{ANSWER_FORMAT}"


def instructions(proposals: Sequence[str]) -> list[tuple[str, str]]:
    """The baseline and each proposal, with the source each configuration row names."""
    return [("baseline", BASELINE_INSTRUCTION), *((f"proposed:{i + 1}", p) for i, p in enumerate(proposals))]
