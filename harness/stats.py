"""Counting what a run's events say: the numbers ``ouro corpus stats`` prints and ingest records.

One fold (``Tally``) is used for both (``corpus_stats`` builds the command's report from it), so a run's
tool calls, tool errors (``tools.is_tool_error``, counted once per call), usage and folded cost mean the
same everywhere:

- usage: the sum of the events' ``usage`` (the readers already count a response once: transcripts by
  ``message.id``/``requestId``, stream-json by its ``result`` lines);
- cost: ``total_cost_usd`` folded per file and session (``cost.SessionCosts``);
- turns: stream-json ``result`` lines, and ``Stop`` hooks that are not ``stop_hook_active`` repeats;
- tool calls: every call once (by ``tool_use_id``); a hook's ``PostToolUse``/``PostToolUseFailure`` payload
  describes its whole call, so a log that kept only those counts its calls (paired with their
  ``PreToolUse`` by ``tool_use_id``, or, in payloads older than it, by session, tool and input);
- struggles by gate: the tool errors a gate's denial accounts for, per gate (``tools.denied_by``);
- the prompt-cache ratio h_r (``cache_ratio``): cache read over prompt tokens of the counted usage, the one
  definition ``ouro measure h-fleet``, the ``cache-floor`` miner and the ops page share; none when the run
  counted no prompt token or its format does not report the cache (a SWE-agent trajectory);
- sessions: distinct session ids (in the total, distinct over every run, as one session can span files);
- agents: the same calls, errors and usage per agent that made them (``main``, or a subagent's id), so a
  session read with its subagents is the sum of its parts; a relay the run also reads from the subagent's
  own transcript (``Reader.repeats``) is skipped and counted as ``relays_skipped``, never counted twice.
"""

from __future__ import annotations

from collections import Counter, defaultdict, deque
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from itertools import count
from typing import TYPE_CHECKING, Any

from ouroboros_gates.harness.cost import SessionCosts
from ouroboros_gates.harness.hooks import is_turn_end
from ouroboros_gates.harness.line import LineEvent, Tokens
from ouroboros_gates.harness.openhands import is_openhands_event
from ouroboros_gates.harness.reader import Reader
from ouroboros_gates.harness.swe_agent import CACHE_UNREPORTED
from ouroboros_gates.harness.tools import by_input, call_key, denied_by, is_tool_error
from ouroboros_gates.schemas.kinds import HarnessKind

if TYPE_CHECKING:
    from ouroboros_gates.schemas import RunSummary

__all__ = ["MAIN_AGENT", "AgentStats", "Tally", "cache_ratio", "summarise"]

_UNNAMED = "(unnamed)"
_HOOK_RESULTS = frozenset({"PostToolUse", "PostToolUseFailure"})
"""Hook payloads that describe a whole call (its tool and input) besides its result."""
_HOOK_CALLS = _HOOK_RESULTS | {"PreToolUse"}
"""Hook payloads of a call, paired by session, tool and input when they carry no ``tool_use_id``."""
MAIN_AGENT = "main"
"""The agent name of a session's own (not a subagent's) calls and usage."""


@dataclass(frozen=True)
class AgentStats:
    """One agent's share of a run: its tool calls, tool errors and usage."""

    tool_calls: int = 0
    tool_errors: int = 0
    usage: Tokens = field(default_factory=Tokens)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"tool_calls": self.tool_calls, "tool_errors": self.tool_errors, "usage": self.usage.as_dict()}

    def __add__(self, other: AgentStats) -> AgentStats:
        return AgentStats(
            self.tool_calls + other.tool_calls, self.tool_errors + other.tool_errors, self.usage + other.usage
        )


def cache_ratio(usage: Tokens) -> float | None:
    """h_r = cache_read / (input + cache_creation + cache_read); None when no prompt token was counted."""
    return usage.cache_read_input_tokens / usage.prompt_tokens if usage.prompt_tokens else None


@dataclass
class Tally:
    """A running count over one run's events (memory grows with distinct calls, not with lines)."""

    calls: dict[Hashable, str] = field(default_factory=dict)
    # Events without a tool_use_id each count once; a running number keys them (never id(), reused).
    anonymous: Iterator[int] = field(default_factory=count)
    errors: dict[Hashable, str] = field(default_factory=dict)
    gates: dict[Hashable, tuple[str, ...]] = field(default_factory=dict)
    subagent_calls: set[Hashable] = field(default_factory=set)
    agent_of: dict[Hashable, str] = field(default_factory=dict)
    agent_usage: dict[str, Tokens] = field(default_factory=dict)
    waiting: dict[tuple[bool, Hashable], deque[Hashable]] = field(default_factory=lambda: defaultdict(deque))
    relays_skipped: int = 0
    usage: Tokens = field(default_factory=Tokens)
    cache_unreported: bool = False
    costs: SessionCosts = field(default_factory=SessionCosts)
    sessions: set[str] = field(default_factory=set)
    turns: int = 0
    started_at: datetime | None = None
    ended_at: datetime | None = None

    def add(self, event: LineEvent) -> None:
        """Count one event."""
        agent = event.agent or MAIN_AGENT
        self._count_call(event, agent)
        self._count_usage(event, agent)
        self._count_cost(event)
        if event.session:
            self.sessions.add(event.session)
        self.turns += event.kind is HarnessKind.RESULT or is_turn_end(event)
        self._count_moment(event.timestamp)

    def _count_usage(self, event: LineEvent, agent: str) -> None:
        """Add the event's usage to the run's and its agent's."""
        if event.usage is None:
            return
        self.usage = self.usage + event.usage
        self.agent_usage[agent] = self.agent_usage.get(agent, Tokens()) + event.usage
        self.cache_unreported |= event.subtype == CACHE_UNREPORTED

    def _count_cost(self, event: LineEvent) -> None:
        """Fold the cumulative cost the event reports into its counter's."""
        if event.total_cost_usd is None:
            return
        # A counter belongs to one process, which writes one file: fold per file and session. An
        # OpenHands conversation's counter runs over its events, one a file in its events/ folder.
        where = None if is_openhands_event(event.raw) else event.span.file
        self.costs.add((where, event.session), event.total_cost_usd)

    def _count_moment(self, moment: datetime | None) -> None:
        """Widen the run's span of time to ``moment``."""
        if moment is None:
            return
        self.started_at = min(self.started_at or moment, moment)
        self.ended_at = max(self.ended_at or moment, moment)

    def _count_call(self, event: LineEvent, agent: str) -> None:
        """Count the call the event describes, and its failure."""
        describes_call = _describes_call(event)
        failed = is_tool_error(event)
        if not (describes_call or failed):
            return
        key = self._key(event)
        if describes_call:
            self._call(key, event, agent)
        if failed:
            self._error(key, event, agent)

    def _error(self, key: Hashable, event: LineEvent, agent: str) -> None:
        self.errors[key] = event.tool or self.errors.get(key) or self.calls.get(key) or _UNNAMED
        self.agent_of.setdefault(key, agent)
        if gates := denied_by(event):
            self.gates[key] = gates

    def _call(self, key: Hashable, event: LineEvent, agent: str) -> None:
        self.calls[key] = event.tool or self.calls.get(key) or _UNNAMED
        self.agent_of[key] = agent
        if event.agent:
            self.subagent_calls.add(key)

    def _key(self, event: LineEvent) -> Hashable:
        """The call an event belongs to: its ``tool_use_id``; for a hook payload without one, the waiting call
        of the other side with the same session, tool and input (either may come first); else its own."""
        key = call_key(event)
        if key is not None:
            return key
        if event.subtype not in _HOOK_CALLS:
            return self._anonymous()
        return self._by_input(event)

    def _by_input(self, event: LineEvent) -> Hashable:
        """A hook payload's call without an id: the oldest waiting one of the other side, else a new one."""
        similar, is_call = by_input(event), event.kind is HarnessKind.TOOL_CALL
        theirs = self.waiting[(not is_call, similar)]
        if theirs:
            return theirs.popleft()
        fresh = self._anonymous()
        self.waiting[(is_call, similar)].append(fresh)
        return fresh

    def _anonymous(self) -> Hashable:
        """A key of its own, for an event that cannot be joined to its call."""
        return ("anonymous", next(self.anonymous))

    @property
    def cache(self) -> float | None:
        """The run's h_r (``cache_ratio``); None when its format does not report the cache."""
        return None if self.cache_unreported else cache_ratio(self.usage)

    @classmethod
    def of(cls, reader: Reader) -> Tally:
        """Read a run through and count every event, but the relays its subagents' own transcripts repeat
        (plain: counting needs no model)."""
        tally = cls()
        for event in reader.plain():
            if reader.repeats(event):
                tally.relays_skipped += 1
            else:
                tally.add(event)
        return tally

    def by_agent(self) -> dict[str, AgentStats]:
        """Calls, errors and usage per agent (``main`` first, then the subagents by id)."""
        calls = Counter(self.agent_of[key] for key in self.calls)
        errors = Counter(self.agent_of[key] for key in self.errors)
        names = sorted(
            set(calls) | set(errors) | set(self.agent_usage), key=lambda name: (name != MAIN_AGENT, name)
        )
        return {
            name: AgentStats(calls[name], errors[name], self.agent_usage.get(name, Tokens()))
            for name in names
        }

    def by_tool(self, which: dict[Hashable, str]) -> dict[str, int]:
        """Counts per tool name, with a result's name filled in from its call when it lacked one."""
        names = Counter(
            self.calls.get(key, name) if name == _UNNAMED else name for key, name in which.items()
        )
        return dict(sorted(names.items()))

    def by_gate(self) -> dict[str, int]:
        """Struggles per gate that denied the call (a call two gates denied counts for each)."""
        return dict(sorted(Counter(gate for gates in self.gates.values() for gate in gates).items()))


def _describes_call(event: LineEvent) -> bool:
    """Whether the event describes a whole call: a call, or a hook payload that describes its call with
    its result."""
    return event.kind is HarnessKind.TOOL_CALL or event.subtype in _HOOK_RESULTS


def summarise(reader: Reader) -> RunSummary:
    """Read a run through and fold it into the summary ``RunRecorded`` carries."""
    from ouroboros_gates.schemas import RunSummary

    tally = Tally.of(reader)
    cost = tally.costs.total
    return RunSummary(
        run=reader.run,
        lines=reader.lines,
        malformed=reader.malformed_count,
        tool_calls=len(tally.calls),
        tool_errors=len(tally.errors),
        usage=tally.usage.typed(),
        cache_reported=not tally.cache_unreported,
        cost_usd=round(cost, 10) if cost is not None else None,
        started_at=tally.started_at,
        ended_at=tally.ended_at,
    )
