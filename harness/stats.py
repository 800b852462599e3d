"""Counting what a run's events say: the numbers ``ouro corpus stats`` prints and ingest records.

One fold (``Tally``) is used for both, so a run's tool calls, tool errors (``tools.is_tool_error``, counted
once per call), usage and folded cost mean the same everywhere:

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
from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from itertools import count
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ouroboros_gates.harness.cost import SessionCosts
from ouroboros_gates.harness.detect import Format, agent_of
from ouroboros_gates.harness.hooks import is_turn_end
from ouroboros_gates.harness.line import LineEvent, Tokens
from ouroboros_gates.harness.paths import expand
from ouroboros_gates.harness.reader import Reader, Unread
from ouroboros_gates.harness.source import Malformed
from ouroboros_gates.harness.swe_agent import CACHE_UNREPORTED
from ouroboros_gates.harness.tools import TOOL_ERROR_DEFINITION, by_input, call_key, denied_by, is_tool_error
from ouroboros_gates.schemas.kinds import HarnessKind

if TYPE_CHECKING:
    from ouroboros_gates.schemas import RunSummary

__all__ = [
    "MAIN_AGENT",
    "AgentStats",
    "CorpusStats",
    "RunStats",
    "Tally",
    "cache_ratio",
    "collect",
    "run_stats",
    "summarise",
]

_UNNAMED = "(unnamed)"
_HOOK_RESULTS = frozenset({"PostToolUse", "PostToolUseFailure"})
"""Hook payloads that describe a whole call (its tool and input) besides its result."""
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
        describes_call = event.kind is HarnessKind.TOOL_CALL or event.subtype in _HOOK_RESULTS
        failed = is_tool_error(event)
        if describes_call or failed:
            key = self._key(event)
            if describes_call:
                self._call(key, event, agent)
            if failed:
                self.errors[key] = event.tool or self.errors.get(key) or self.calls.get(key) or _UNNAMED
                self.agent_of.setdefault(key, agent)
                if gates := denied_by(event):
                    self.gates[key] = gates
        if event.usage is not None:
            self.usage = self.usage + event.usage
            self.agent_usage[agent] = self.agent_usage.get(agent, Tokens()) + event.usage
            self.cache_unreported |= event.subtype == CACHE_UNREPORTED
        if event.total_cost_usd is not None:
            # A counter belongs to one process, which writes one file: fold per file and session.
            self.costs.add((event.span.file, event.session), event.total_cost_usd)
        if event.session:
            self.sessions.add(event.session)
        self.turns += event.kind is HarnessKind.RESULT or is_turn_end(event)
        if event.timestamp is not None:
            self.started_at = min(self.started_at or event.timestamp, event.timestamp)
            self.ended_at = max(self.ended_at or event.timestamp, event.timestamp)

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
        if event.subtype not in _HOOK_RESULTS and event.subtype != "PreToolUse":
            return ("anonymous", next(self.anonymous))
        similar, is_call = by_input(event), event.kind is HarnessKind.TOOL_CALL
        theirs = self.waiting[(not is_call, similar)]
        if theirs:
            return theirs.popleft()
        fresh = ("anonymous", next(self.anonymous))
        self.waiting[(is_call, similar)].append(fresh)
        return fresh

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


@dataclass
class RunStats:
    """What ``ouro corpus stats`` reports for one run (or, with ``run == "total"``, for all of them)."""

    run: str
    path: str
    files: int
    formats: dict[str, int]
    lines: int
    malformed: list[Malformed]
    malformed_count: int
    sessions: set[str]
    tool_calls: dict[str, int]
    tool_errors: dict[str, int]
    subagent_tool_calls: int
    usage: Tokens
    cost_usd: float | None
    turns: int
    agents: dict[str, AgentStats] = field(default_factory=dict)
    relays_skipped: int = 0
    notes: tuple[str, ...] = ()
    tool_errors_by_gate: dict[str, int] = field(default_factory=dict)
    cache: float | None = None
    """h_r (``cache_ratio``); None without prompt tokens or when the format does not report the cache."""
    unread: list[Unread] = field(default_factory=list)
    started_at: datetime | None = None
    ended_at: datetime | None = None

    @property
    def agent(self) -> str:
        """The agent that wrote the run: ``claude-code``, ``swe-agent``, ``openhands`` (``mixed``, ``unknown``)."""
        return agent_of(self.formats)

    @property
    def format(self) -> str:
        """The format of the run's objects: one name, ``mixed``, or ``empty``."""
        named = [name for name in self.formats if name != Format.UNKNOWN] or list(self.formats)
        if not named:
            return Format.EMPTY.value
        return named[0] if len(named) == 1 else Format.MIXED.value

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict with a stable shape (keys are sorted when dumped)."""
        return {
            "run": self.run,
            "path": self.path,
            "files": self.files,
            "format": self.format,
            "agent": self.agent,
            "formats": dict(sorted(self.formats.items())),
            "lines": self.lines,
            "malformed": self.malformed_count,
            "malformed_lines": [
                {"file": bad.span.file, "line": bad.span.line, "reason": bad.reason} for bad in self.malformed
            ],
            "sessions": len(self.sessions),
            "tool_calls": sum(self.tool_calls.values()),
            "tool_calls_by_tool": self.tool_calls,
            "subagent_tool_calls": self.subagent_tool_calls,
            "tool_errors": sum(self.tool_errors.values()),
            "tool_errors_by_tool": self.tool_errors,
            "tool_errors_by_gate": self.tool_errors_by_gate,
            "h_r": self.cache,
            "started_at": _iso(self.started_at),
            "ended_at": _iso(self.ended_at),
            "unread": [{"file": bad.file, "keys": bad.keys, "reason": str(bad)} for bad in self.unread],
            "usage": self.usage.as_dict(),
            "cost_usd": self.cost_usd,
            "turns": self.turns,
            "agents": {name: agent.to_json() for name, agent in self.agents.items()},
            "relays_skipped": self.relays_skipped,
            "notes": list(self.notes),
        }


@dataclass
class CorpusStats:
    """Per-run statistics and their total."""

    runs: list[RunStats]
    total: RunStats

    def to_json(self) -> dict[str, Any]:
        """The stable JSON document ``ouro corpus stats --json`` prints."""
        return {
            "runs": [run.to_json() for run in self.runs],
            "total": self.total.to_json(),
            "tool_error_definition": TOOL_ERROR_DEFINITION,
        }

    @property
    def unread(self) -> list[Unread]:
        """The files no reader could read, over every run."""
        return self.total.unread


def run_stats(reader: Reader, path: Path) -> RunStats:
    """Read one run through and count it."""
    tally = Tally.of(reader)
    cost = tally.costs.total
    return RunStats(
        run=reader.run,
        path=str(path),
        files=len(reader.files),
        formats={str(name): n for name, n in sorted(reader.formats.items())},
        lines=reader.lines,
        malformed=reader.malformed,
        malformed_count=reader.malformed_count,
        sessions=tally.sessions,
        tool_calls=tally.by_tool(tally.calls),
        tool_errors=tally.by_tool(tally.errors),
        subagent_tool_calls=len(tally.subagent_calls),
        usage=tally.usage,
        cost_usd=round(cost, 10) if cost is not None else None,
        turns=tally.turns,
        agents=tally.by_agent(),
        relays_skipped=tally.relays_skipped,
        notes=(*reader.notes, *reader.cut),
        tool_errors_by_gate=tally.by_gate(),
        cache=tally.cache,
        unread=reader.unread,
        started_at=tally.started_at,
        ended_at=tally.ended_at,
    )


def collect(items: Iterable[str | Path]) -> CorpusStats:
    """Statistics for every run named by files, run directories, directories of runs or globs."""
    runs = [run_stats(Reader(run.files, run.name, run.notes), run.path) for run in expand(items)]
    return CorpusStats(runs=runs, total=_total(runs))


def _total(runs: list[RunStats]) -> RunStats:
    formats: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    gates: Counter[str] = Counter()
    usage, costs = Tokens(), [run.cost_usd for run in runs if run.cost_usd is not None]
    agents: dict[str, AgentStats] = {}
    for run in runs:
        for name, agent in run.agents.items():
            agents[name] = agents.get(name, AgentStats()) + agent
        formats.update(run.formats)
        calls.update(run.tool_calls)
        errors.update(run.tool_errors)
        gates.update(run.tool_errors_by_gate)
        usage = usage + run.usage
    return RunStats(
        run="total",
        path="",
        files=sum(run.files for run in runs),
        formats=dict(sorted(formats.items())),
        lines=sum(run.lines for run in runs),
        malformed=[bad for run in runs for bad in run.malformed],
        malformed_count=sum(run.malformed_count for run in runs),
        sessions={session for run in runs for session in run.sessions},
        tool_calls=dict(sorted(calls.items())),
        tool_errors=dict(sorted(errors.items())),
        subagent_tool_calls=sum(run.subagent_tool_calls for run in runs),
        usage=usage,
        cost_usd=round(sum(costs), 10) if costs else None,
        turns=sum(run.turns for run in runs),
        agents=dict(sorted(agents.items(), key=lambda item: (item[0] != MAIN_AGENT, item[0]))),
        relays_skipped=sum(run.relays_skipped for run in runs),
        notes=tuple(note for run in runs for note in run.notes),
        tool_errors_by_gate=dict(sorted(gates.items())),
        cache=cache_ratio(sum((run.usage for run in runs if run.cache is not None), Tokens())),
        unread=[bad for run in runs for bad in run.unread],
        started_at=min((run.started_at for run in runs if run.started_at), default=None),
        ended_at=max((run.ended_at for run in runs if run.ended_at), default=None),
    )


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat().replace("+00:00", "Z")
