"""Reader for harness runs: Claude Code stream-json lines, bare or in the CSF envelope.

A CSF envelope line is ``{"ts": …, "event_type": …, "event": {…}}`` whose ``event`` is one stream-json
line. Lines are read lazily, one at a time; a malformed line is reported with its file:line and counted,
and the rest of the file is still read.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from events.corpus.cost import fold_cumulative
from events.errors import CorpusError
from schemas import HarnessEvent, HarnessKind, RunSummary, Span, Usage

__all__ = ["Malformed", "RunReader", "read_run", "summarise"]

_KINDS = {
    "system": HarnessKind.SYSTEM,
    "assistant": HarnessKind.ASSISTANT,
    "user": HarnessKind.USER,
    "result": HarnessKind.RESULT,
}


@dataclass(frozen=True)
class Malformed:
    """A line that could not be read, with where and why."""

    span: Span
    reason: str

    def __str__(self) -> str:
        return f"{self.span.file}:{self.span.line}: {self.reason}"


@dataclass
class RunReader:
    """Reads one run file lazily into harness events, collecting the malformed lines it skips."""

    path: Path
    run: str
    malformed: list[Malformed] = field(default_factory=list)
    lines: int = 0

    def __iter__(self) -> Iterator[HarnessEvent]:
        try:
            handle = self.path.open("rb")
        except OSError as exc:
            raise CorpusError(f"{self.path}: cannot read: {exc.strerror}") from exc
        with handle:
            for number, raw in enumerate(handle, start=1):
                self.lines = number
                if not raw.strip():
                    continue
                span = Span(file=str(self.path), line=number)
                try:
                    doc = orjson.loads(raw)
                except orjson.JSONDecodeError as exc:
                    self.malformed.append(Malformed(span, f"not JSON ({exc.msg})"))
                    continue
                if not isinstance(doc, dict):
                    self.malformed.append(Malformed(span, "not a JSON object"))
                    continue
                yield from _events(self.run, doc, span)


def read_run(path: Path, run: str | None = None) -> RunReader:
    """A lazy reader over ``path`` (a run directory's events.jsonl, or the directory itself)."""
    if path.is_dir():
        path = path / "events.jsonl"
    return RunReader(path=path, run=run or path.parent.name)


def _events(run: str, doc: dict[str, Any], span: Span) -> Iterator[HarnessEvent]:
    timestamp = _timestamp(doc.get("ts") or doc.get("timestamp"))
    inner = doc.get("event")
    line: dict[str, Any] = inner if isinstance(inner, dict) else doc
    line_type = str(doc.get("event_type") or line.get("type") or "")
    base: dict[str, Any] = {
        "run": run,
        "session": line.get("session_id"),
        "timestamp": timestamp,
        "span": span,
        "raw": doc,
    }
    message = line.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
    calls = [b for b in blocks if b.get("type") == "tool_use"]
    results = [b for b in blocks if b.get("type") == "tool_result"]
    if line_type == "assistant" and calls:
        for block in calls:
            yield HarnessEvent(kind=HarnessKind.TOOL_CALL, tool=block.get("name"), tool_use_id=block.get("id"), **base)
    elif line_type == "user" and results:
        for block in results:
            yield HarnessEvent(
                kind=HarnessKind.TOOL_RESULT,
                tool_use_id=block.get("tool_use_id"),
                is_error=bool(block.get("is_error")),
                **base,
            )
    else:
        yield HarnessEvent(
            kind=_KINDS.get(line_type, HarnessKind.OTHER),
            subtype=line.get("subtype"),
            is_error=bool(line.get("is_error")) if line_type == "result" else False,
            usage=_usage(line.get("usage")) if line_type == "result" else None,
            total_cost_usd=_number(line.get("total_cost_usd")),
            **base,
        )


def summarise(reader: RunReader) -> RunSummary:
    """Fold a run's events into the numbers a user checks first."""
    calls = errors = 0
    usage = {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    costs: list[float] = []
    times: list[datetime] = []
    for item in reader:
        calls += item.kind == HarnessKind.TOOL_CALL
        errors += item.kind == HarnessKind.TOOL_RESULT and item.is_error
        if item.usage is not None:
            for key in usage:
                usage[key] += getattr(item.usage, key)
        if item.total_cost_usd is not None:
            costs.append(item.total_cost_usd)
        if item.timestamp is not None:
            times.append(item.timestamp)
    return RunSummary(
        run=reader.run,
        lines=reader.lines,
        malformed=len(reader.malformed),
        tool_calls=calls,
        tool_errors=errors,
        usage=Usage(**usage),
        cost_usd=round(fold_cumulative(costs), 10) if costs else None,
        started_at=min(times) if times else None,
        ended_at=max(times) if times else None,
    )


def _usage(value: Any) -> Usage | None:
    if not isinstance(value, dict):
        return None
    fields = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    return Usage(**{name: int(value.get(name) or 0) for name in fields})


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _timestamp(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None
