"""Corpus readers: harness logs in, typed ``HarnessEvent``s with exact spans out.

Formats, detected per file and per line (``detect``), never by a flag: the CSF envelope
(``envelope``), Claude Code ``--output-format stream-json`` (``streamjson``), Claude Code transcripts
(``transcript``) and Claude Code hook payloads (``hooks``), as JSON lines or JSON documents (``source``).
Which files make a run is ``paths`` (``expand`` for command-line paths, ``run_at`` for one path), the one
path reader every command uses: a harness run directory, a file, or Claude Code's projects layout, a run
per session named by its ``sessionId`` and read with its subagents' transcripts. Everything is read
lazily and bad input never stops a reader: malformed lines are reported with their file:line and
counted; a session folder without its main transcript is read with a note saying so. ``tools`` holds
the one definition of a tool error and the call/result pairing; ``stats`` the counts ``ouro corpus
stats`` prints (per run and per agent) and ingest records; ``cost`` the folding of ``total_cost_usd``.
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

from ouroboros_gates.schemas._lazy import reexport

if TYPE_CHECKING:
    from ouroboros_gates.harness.cost import CostFold, SessionCosts, fold_cumulative
    from ouroboros_gates.harness.detect import Format, classify, detect_format
    from ouroboros_gates.harness.paths import RunFiles, expand, run_at, run_files, run_name
    from ouroboros_gates.harness.reader import Reader, iter_events, read
    from ouroboros_gates.harness.source import Layout, Malformed
    from ouroboros_gates.harness.stats import MAIN_AGENT, AgentStats, CorpusStats, RunStats, collect, summarise
    from ouroboros_gates.harness.tools import TOOL_ERROR_DEFINITION, ToolUse, call_key, is_tool_error, pair_tool_uses

__all__ = [
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
    "call_key",
    "classify",
    "collect",
    "detect_format",
    "expand",
    "fold_cumulative",
    "is_tool_error",
    "iter_events",
    "pair_tool_uses",
    "read",
    "run_at",
    "run_files",
    "run_name",
    "summarise",
]

__getattr__ = reexport(__name__, __file__)
