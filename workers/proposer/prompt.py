"""The proposer's prompt: a shared prefix, byte-identical on every call, then one batch of tickets.

Provider prompt caches match on a prefix, so everything that does not depend on the batch (the contract,
the corpus kinds, the registered miners, the answer's schema) comes first and never varies: no time, no
counter, no ticket. The overnight loop's prompt began with a timestamp and read 0 cached tokens (docs/loop.md,
"First mining run"); this one starts with the same bytes every time.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ouroboros_gates.forge import Ticket
from ouroboros_gates.llm import ChatRequest
from ouroboros_gates.schemas import CorpusKind
from ouroboros_gates.workers.prechecker import has_block

__all__ = ["SCHEMA", "batch_message", "build_request", "shared_prefix"]

SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["proposals"],
    "properties": {
        "proposals": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": [
                    "ticket",
                    "miner",
                    "corpus",
                    "predicate",
                    "facts",
                    "rules",
                    "instances",
                    "labels",
                ],
                "properties": {
                    "ticket": {"type": "integer"},
                    "miner": {"type": "string"},
                    "corpus": {
                        "type": "array",
                        "items": {"type": "string", "enum": [k.value for k in CorpusKind]},
                    },
                    "predicate": {"type": "string"},
                    "facts": {"type": "array", "items": {"type": "string"}},
                    "rules": {"type": "string"},
                    "instances": {"type": "array", "items": {"type": "string"}},
                    "labels": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "additionalProperties": False,
                            "required": ["instance", "sign"],
                            "properties": {
                                "instance": {"type": "string"},
                                "sign": {"type": "string", "enum": ["+", "-"]},
                            },
                        },
                    },
                },
            },
        }
    },
}
"""The answer: one proposal per ticket of the batch."""

_INSTRUCTIONS = """\
You propose miners for Ouroboros. A miner turns a corpus item into facts, each with its source line, and
derives verdicts with a Datalog rule; it is accepted only when a walk-forward backtest finds every labelled
offense. For each mining ticket you are given, propose one miner:

- miner: a name of lower-case letters, digits and hyphens (reuse a registered miner's name when it fits);
- corpus: the kinds its extractor reads: jsonl (a harness run, named by its run id), issue and pull_request
  (named #N), file_at (a file at a commit, named by the commit sha);
- predicate: one sentence, with the concrete evidence in backticks;
- facts: fact lines "name(Args) :- what makes it true";
- rules: rules.dl text, e.g. `offense(R) :- gated(R), score(R, S), knee(K), gt(S, K).`;
- instances: real corpus items the ticket or its comments name; never invent one, and never the ticket itself;
- labels: for each instance, "+" if it is an offense and "-" if it is clean.

Answer with one JSON object matching the schema, one proposal per ticket, in the order given.
"""


def shared_prefix(miners: Mapping[str, Sequence[str]]) -> str:
    """The system message: instructions, the registered miners and the schema (the same bytes every call)."""
    listed = "\n".join(f"- {name}: reads {', '.join(kinds)}" for name, kinds in sorted(miners.items()))
    schema = json.dumps(SCHEMA, sort_keys=True, separators=(",", ":"))
    return f"{_INSTRUCTIONS}\nRegistered miners:\n{listed or '- none'}\n\nSchema:\n{schema}\n"


def batch_message(tickets: Sequence[Ticket]) -> str:
    """The user message: each ticket's number, title, body and its comments that are not proposals."""
    parts = []
    for ticket in tickets:
        comments = [f"  {c.author}: {c.body.strip()}" for c in ticket.comments if not has_block(c.body)]
        parts.append(
            f"Ticket #{ticket.number}: {ticket.title}\n{ticket.body.strip()}\n"
            + ("Comments:\n" + "\n".join(comments) + "\n" if comments else "")
        )
    return "\n".join(parts)


def build_request(prefix: str, tickets: Sequence[Ticket]) -> ChatRequest:
    """One call for one batch: the shared prefix as the system message, the batch as the user message."""
    return ChatRequest(
        messages=({"role": "system", "content": prefix}, {"role": "user", "content": batch_message(tickets)}),
        schema=SCHEMA,
        temperature=0.0,
    )
