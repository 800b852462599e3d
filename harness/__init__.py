"""Corpus readers: harness logs in, typed ``HarnessEvent``s with exact spans out.

Formats, detected per file and per line (``detect``), never by a flag: the CSF envelope
(``envelope``), Claude Code ``--output-format stream-json`` (``streamjson``), Claude Code transcripts
(``transcript``), Claude Code hook payloads (``hooks``), SWE-agent trajectories (``swe_agent``) and OpenHands
event lists (``openhands``), as JSON lines or JSON documents (``source``). A file holding none of them is
named (``Reader.unread``), never skipped in silence.
Which files make a run is ``paths`` (``expand`` for command-line paths, ``run_at`` for one path), the one
path reader every command uses: a harness run directory, a file, or Claude Code's projects layout, a run
per session named by its ``sessionId`` and read with its subagents' transcripts; ``peek`` says what a log
file's first objects hold (its format, its session). Everything is read
lazily and bad input never stops a reader: malformed lines are reported with their file:line and
counted; a session folder without its main transcript is read with a note saying so. ``tools`` holds
the one definition of a tool error (a struggle: an error or a gate's denial) and the call/result pairing;
``stats`` the counts ``ouro corpus stats`` prints (per run and per agent: ``corpus_stats``) and ingest
records, with the one prompt-cache ratio h_r (``cache_ratio``); ``cost`` the folding of ``total_cost_usd``.
Pure code: no Celery, no SQLAlchemy.

    reader = read("runs/r1")                     # a file of any format, or a run directory
    for event in reader: ...                     # HarnessEvent, lazily
    for event in reader.plain(): ...             # the readers' own LineEvent: no model loaded (counting)
    summary = summarise(read("session.jsonl"))   # RunSummary
    reader.malformed                             # [Malformed(span, reason)]
    reader.repeats(event)                        # a relay its subagent's own transcript repeats
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ouroboros_gates._lazy import lazy

if TYPE_CHECKING:
    from ouroboros_gates.harness.corpus_stats import CorpusStats, RunStats, collect, stats_of
    from ouroboros_gates.harness.cost import CostFold, SessionCosts, fold_cumulative
    from ouroboros_gates.harness.detect import Format, classify, detect_format
    from ouroboros_gates.harness.paths import RunFiles, expand, run_at, run_files, run_name
    from ouroboros_gates.harness.peek import format_of, has_result_lines
    from ouroboros_gates.harness.reader import Reader, Unread, iter_events, read, unread_files
    from ouroboros_gates.harness.source import Layout, Malformed
    from ouroboros_gates.harness.stats import MAIN_AGENT, AgentStats, cache_ratio, summarise
    from ouroboros_gates.harness.swe_agent import CACHE_UNREPORTED
    from ouroboros_gates.harness.tools import (
        TOOL_ERROR_DEFINITION,
        ToolUse,
        call_key,
        denied_by,
        is_tool_error,
        pair_tool_uses,
    )

__all__ = [
    "CACHE_UNREPORTED",
    "MAIN_AGENT",
    "TOOL_ERROR_DEFINITION",
    "AgentStats",
    "CorpusStats",
    "CostFold",
    "Format",
    "Layout",
    "Malformed",
    "Reader",
    "RunFiles",
    "RunStats",
    "SessionCosts",
    "ToolUse",
    "Unread",
    "cache_ratio",
    "call_key",
    "classify",
    "collect",
    "denied_by",
    "detect_format",
    "expand",
    "fold_cumulative",
    "format_of",
    "has_result_lines",
    "is_tool_error",
    "iter_events",
    "pair_tool_uses",
    "read",
    "run_at",
    "run_files",
    "run_name",
    "stats_of",
    "summarise",
    "unread_files",
]

_HOMES = {
    "AgentStats": "ouroboros_gates.harness.stats",
    "CACHE_UNREPORTED": "ouroboros_gates.harness.swe_agent",
    "CorpusStats": "ouroboros_gates.harness.corpus_stats",
    "CostFold": "ouroboros_gates.harness.cost",
    "Format": "ouroboros_gates.harness.detect",
    "Layout": "ouroboros_gates.harness.source",
    "MAIN_AGENT": "ouroboros_gates.harness.stats",
    "Malformed": "ouroboros_gates.harness.source",
    "Reader": "ouroboros_gates.harness.reader",
    "RunFiles": "ouroboros_gates.harness.paths",
    "RunStats": "ouroboros_gates.harness.corpus_stats",
    "SessionCosts": "ouroboros_gates.harness.cost",
    "TOOL_ERROR_DEFINITION": "ouroboros_gates.harness.tools",
    "ToolUse": "ouroboros_gates.harness.tools",
    "Unread": "ouroboros_gates.harness.reader",
    "cache_ratio": "ouroboros_gates.harness.stats",
    "call_key": "ouroboros_gates.harness.tools",
    "classify": "ouroboros_gates.harness.detect",
    "collect": "ouroboros_gates.harness.corpus_stats",
    "denied_by": "ouroboros_gates.harness.tools",
    "detect_format": "ouroboros_gates.harness.detect",
    "expand": "ouroboros_gates.harness.paths",
    "fold_cumulative": "ouroboros_gates.harness.cost",
    "format_of": "ouroboros_gates.harness.peek",
    "has_result_lines": "ouroboros_gates.harness.peek",
    "is_tool_error": "ouroboros_gates.harness.tools",
    "iter_events": "ouroboros_gates.harness.reader",
    "pair_tool_uses": "ouroboros_gates.harness.tools",
    "read": "ouroboros_gates.harness.reader",
    "run_at": "ouroboros_gates.harness.paths",
    "run_files": "ouroboros_gates.harness.paths",
    "run_name": "ouroboros_gates.harness.paths",
    "stats_of": "ouroboros_gates.harness.corpus_stats",
    "summarise": "ouroboros_gates.harness.stats",
    "unread_files": "ouroboros_gates.harness.reader",
}
"""Where each name of ``__all__`` lives (the ``TYPE_CHECKING`` block says the same, for mypy)."""

__getattr__ = lazy(__name__, _HOMES)
