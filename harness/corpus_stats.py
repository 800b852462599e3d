"""What ``ouro corpus stats`` reports: each run's counts (``stats.Tally``) with what its reader saw (files,
formats, malformed lines, unread files, notes), and their total over every run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from ouroboros_gates.harness.detect import Format, agent_of
from ouroboros_gates.harness.line import Tokens
from ouroboros_gates.harness.paths import RunFiles, expand
from ouroboros_gates.harness.reader import Reader, Unread
from ouroboros_gates.harness.source import Malformed
from ouroboros_gates.harness.stats import MAIN_AGENT, AgentStats, Tally, cache_ratio
from ouroboros_gates.harness.tools import TOOL_ERROR_DEFINITION

__all__ = ["CorpusStats", "RunStats", "collect", "run_stats", "stats_of"]

_T = TypeVar("_T")


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
    vanished: list[str] = field(default_factory=list)
    """The files that were gone when they were to be read (deleted since they were listed): skipped."""
    started_at: datetime | None = None
    ended_at: datetime | None = None

    @property
    def agent(self) -> str:
        """The agent that wrote the run: ``claude-code``, ``swe-agent``, ``openhands`` (``mixed``,
        ``unknown``)."""
        return agent_of(self.formats)

    @property
    def format(self) -> str:
        """The format of the run's objects: one name, ``mixed``, or ``empty``."""
        named = self._named_formats()
        if not named:
            return Format.EMPTY.value
        return named[0] if len(named) == 1 else Format.MIXED.value

    def _named_formats(self) -> list[str]:
        """The run's known formats; all of them when it has none known."""
        return [name for name in self.formats if name != Format.UNKNOWN] or list(self.formats)

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
            "vanished": list(self.vanished),
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
    def vanished(self) -> list[str]:
        """The files deleted between the listing and the read, over every run."""
        return self.total.vanished

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
        notes=(*reader.notes, *reader.cut, *reader.pending),
        tool_errors_by_gate=tally.by_gate(),
        cache=tally.cache,
        unread=reader.unread,
        vanished=reader.vanished,
        started_at=tally.started_at,
        ended_at=tally.ended_at,
    )


def collect(items: Iterable[str | Path]) -> CorpusStats:
    """Statistics for every run named by files, run directories, directories of runs or globs."""
    return stats_of(expand(items))


def stats_of(listed: Iterable[RunFiles]) -> CorpusStats:
    """Statistics for the runs ``paths.expand`` listed (a file deleted since is a counted skip:
    ``vanished``)."""
    runs = [run_stats(Reader(run.files, run.name, run.notes), run.path) for run in listed]
    return CorpusStats(runs=runs, total=_total(runs))


def _total(runs: list[RunStats]) -> RunStats:
    return RunStats(
        run="total",
        path="",
        files=_sum(runs, lambda run: run.files),
        formats=_counted(runs, lambda run: run.formats),
        lines=_sum(runs, lambda run: run.lines),
        malformed=_each(runs, lambda run: run.malformed),
        malformed_count=_sum(runs, lambda run: run.malformed_count),
        sessions=set(_each(runs, lambda run: run.sessions)),
        tool_calls=_counted(runs, lambda run: run.tool_calls),
        tool_errors=_counted(runs, lambda run: run.tool_errors),
        subagent_tool_calls=_sum(runs, lambda run: run.subagent_tool_calls),
        usage=sum((run.usage for run in runs), Tokens()),
        cost_usd=_cost(runs),
        turns=_sum(runs, lambda run: run.turns),
        agents=_agents(runs),
        relays_skipped=_sum(runs, lambda run: run.relays_skipped),
        notes=tuple(_each(runs, lambda run: run.notes)),
        tool_errors_by_gate=_counted(runs, lambda run: run.tool_errors_by_gate),
        cache=_cache(runs),
        unread=_each(runs, lambda run: run.unread),
        vanished=_each(runs, lambda run: run.vanished),
        started_at=min(_known(runs, lambda run: run.started_at), default=None),
        ended_at=max(_known(runs, lambda run: run.ended_at), default=None),
    )


def _cost(runs: list[RunStats]) -> float | None:
    """The runs' costs added up; None when no run knows its cost."""
    costs = [run.cost_usd for run in runs if run.cost_usd is not None]
    return round(sum(costs), 10) if costs else None


def _cache(runs: list[RunStats]) -> float | None:
    """h_r over the usage of the runs whose format reports the prompt cache."""
    return cache_ratio(sum((run.usage for run in runs if run.cache is not None), Tokens()))


def _sum(runs: list[RunStats], value: Callable[[RunStats], int]) -> int:
    return sum(value(run) for run in runs)


def _counted(runs: list[RunStats], counts: Callable[[RunStats], dict[str, int]]) -> dict[str, int]:
    """The runs' counts added up, by name."""
    total: Counter[str] = Counter()
    for run in runs:
        total.update(counts(run))
    return dict(sorted(total.items()))


def _each(runs: list[RunStats], items: Callable[[RunStats], Iterable[_T]]) -> list[_T]:
    return [item for run in runs for item in items(run)]


def _known(runs: list[RunStats], moment: Callable[[RunStats], datetime | None]) -> list[datetime]:
    """The moments the runs know (a run without events knows none)."""
    return [value for run in runs if (value := moment(run)) is not None]


def _agents(runs: list[RunStats]) -> dict[str, AgentStats]:
    """Each agent's share summed over the runs (``main`` first, then the subagents by id)."""
    agents: dict[str, AgentStats] = {}
    for run in runs:
        for name, agent in run.agents.items():
            agents[name] = agents.get(name, AgentStats()) + agent
    return dict(sorted(agents.items(), key=lambda item: (item[0] != MAIN_AGENT, item[0])))


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat().replace("+00:00", "Z")
