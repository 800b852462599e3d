"""h_fleet, the fleet's prompt-cache hit ratio, straight from run files, and the runs that fall below it.

    h_fleet = Σ cache_read / Σ (input + cache_creation + cache_read)

over the usage of every result line, a CSF envelope's ``{"event_type": "result", "event": {…, "usage": {…}}}``
or a bare stream-json ``{"type": "result", "usage": {…}}`` (``claude -p --output-format stream-json``): the jq
command (docs/loop.md, "The h_fleet floor"), line for line. Sums are kept as floats and added in file order,
then line order, as jq adds its doubles, so the ratio is the same double jq prints. Each run (one file) has
its own ratio h_r; an *offender* is a run whose h_r is below the floor 0.9867, and offenders are ranked
ascending (ties by run). A run that read no prompt tokens has no h_r and is never an offender.

Files are read as bytes first, as the labeler's prefilter reads: the lines are counted, and only a line
that holds the string ``"result"`` (every result line's does) is parsed, with orjson. Such a line jq
could not read (not JSON, not an object, a result whose ``event`` or ``usage`` is not an object, a count
that is not a number) is skipped and counted as malformed; any other line is never parsed (jq would stop
at an unreadable one; this reader reads on). A ``result`` spelt with ``\\u`` escapes is not looked for: no
JSON writer we know of escapes a plain letter. Many files (``PARALLEL_FILES``, ``PARALLEL_BYTES``) are read
by one forked process per core, each a contiguous share, and their sums added in file order here.

Every other file of a run (a Claude Code session's transcripts with its subagents', a SWE-agent trajectory,
OpenHands events, hook logs) writes no result line; they are read together by the corpus readers as one
result whose usage is what those readers count for them (``harness.stats``: each response once, by
``message.id``/``requestId``, a subagent's work once though its parent relays it), and a line they cannot
read is counted as malformed. So each run's h_r here is ``harness.stats.cache_ratio`` of the run, as
``ouro corpus stats``, the ``cache-floor`` miner and the ops page compute it. A run whose format reports no
cache counts (SWE-agent) has no h_r, and a run of result-line files that holds no result line (a process
killed before it wrote one) has none either: each is named in ``notes``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import orjson

from ouroboros_gates.harness import Format, format_of, has_result_lines
from ouroboros_gates.schemas._child import Child, fork_child

__all__ = ["FLOOR", "HFleet", "RunRatio", "offenders", "read_h_fleet", "read_h_fleet_runs", "run_name"]

FLOOR = 0.9867
"""The stated floor of h (#241; docs/loop.md, "The h_fleet floor")."""

_COUNTS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


@dataclass(frozen=True)
class RunRatio:
    """One run's prompt-cache numbers: tokens read from cache, and every prompt token."""

    run: str
    cache_read: float
    prompt_tokens: float

    @property
    def h(self) -> float | None:
        """h_r = cache_read / prompt_tokens; None when the run read no prompt tokens."""
        return self.cache_read / self.prompt_tokens if self.prompt_tokens else None


def offenders(runs: Iterable[RunRatio], floor: float = FLOOR) -> list[RunRatio]:
    """The runs whose h_r is below ``floor``, lowest first (ties by run)."""
    below = [(h, r.run, r) for r in runs if (h := r.h) is not None and h < floor]
    return [r for _, _, r in sorted(below, key=lambda item: (item[0], item[1]))]


@dataclass(frozen=True)
class HFleet:
    """h_fleet over a set of run files, with each file's own numbers and what could not be read."""

    cache_read: float
    prompt_tokens: float
    runs: tuple[RunRatio, ...]
    lines: int
    results: int
    malformed: int
    notes: tuple[str, ...] = ()
    """The runs that have no h_r, and why."""
    unread: tuple[str, ...] = ()
    """The files read as result lines that hold nothing in a known format (and no result line)."""

    @property
    def value(self) -> float | None:
        """Σ cache_read / Σ prompt tokens; None when no prompt token was read (jq fails there)."""
        return self.cache_read / self.prompt_tokens if self.prompt_tokens else None


def run_name(path: Path) -> str:
    """A run's name: its directory for ``<run>/events.jsonl``, else the file's stem."""
    return path.parent.name if path.name == "events.jsonl" else path.stem


def _usage(line: bytes) -> tuple[float, float] | bool:
    """(cache_read, prompt) of a result envelope; True for another line; False for a malformed one."""
    try:
        doc = orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    if not isinstance(doc, dict):
        return False
    event = _result_event(doc)
    if not isinstance(event, dict):
        return event
    return _usage_counts(event.get("usage"))


def _result_event(doc: dict[str, Any]) -> dict[str, Any] | tuple[float, float] | bool:
    """The object that carries a result's usage: an envelope's ``event``, or a bare stream-json result line
    itself; (0, 0) for an envelope with no event; True for another line; False for a malformed one."""
    if doc.get("event_type") == "result":
        event = doc.get("event")
        if event is None:
            return (0.0, 0.0)
        return event if isinstance(event, dict) else False
    if doc.get("type") == "result" and "event_type" not in doc:
        return doc
    return True


def _usage_counts(usage: Any) -> tuple[float, float] | bool:
    """(cache_read, prompt) of a result's ``usage`` (none is zero); False when it or a count is unreadable."""
    if usage is None or usage is False:
        return (0.0, 0.0)
    if not isinstance(usage, dict):
        return False
    counts = _counts(usage)
    if counts is None:
        return False
    fresh, created, read = counts
    return read, fresh + created + read


def _counts(usage: dict[str, Any]) -> tuple[float, float, float] | None:
    """The input, cache-creation and cache-read counts of ``usage``; None when one is unreadable."""
    counts: list[float] = []
    for name in _COUNTS:
        count = _count(usage.get(name))
        if count is None:
            return None
        counts.append(count)
    return counts[0], counts[1], counts[2]


def _count(value: Any) -> float | None:
    """jq's ``(.x // 0)`` as a number: null and false are 0; anything but a number is unreadable."""
    if value is None or value is False:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


@dataclass(frozen=True)
class _FileSums:
    """One file read: its lines, its malformed result lines, and (cache_read, prompt) per result line; for a
    part the readers read, whether its format reports the cache."""

    lines: int
    malformed: int
    usages: list[tuple[float, float]]
    unreported: bool = False


_NEEDLE = b'"result"'


def _read_file(path: Path) -> _FileSums:
    """Bytes first: the whole file is read, its lines counted, and only the lines that hold ``"result"``
    are parsed (a result envelope's ``event_type`` is that string; no other line can be one)."""
    data = path.read_bytes()
    lines = _line_count(data)
    malformed, usages, at = 0, [], data.find(_NEEDLE)
    while at >= 0:
        start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        end = len(data) if end < 0 else end
        found = _usage(data[start:end])
        if found is False:
            malformed += 1
        elif found is not True:
            usages.append(found)
        at = data.find(_NEEDLE, end)
    return _FileSums(lines, malformed, usages)


def _line_count(data: bytes) -> int:
    """The lines of ``data``, a last line without its newline counted too."""
    return data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)


_Part = Path | tuple[Path, ...]
"""What is read as one: a file of result lines, read as bytes, or the run's other files, read by the corpus
readers."""


def _parts(paths: Sequence[Path]) -> list[_Part]:
    """A run's files: each file of result lines a part, the others one part, where the first of them is."""
    others = tuple(path for path in paths if not has_result_lines(path))
    parts: list[_Part] = []
    for path in paths:
        if path not in others:
            parts.append(path)
        elif path == others[0]:
            parts.append(others)
    return parts


def _files(part: _Part) -> tuple[Path, ...]:
    return (part,) if isinstance(part, Path) else part


def _read_session(files: tuple[Path, ...]) -> _FileSums:
    """The one result of files with no result line: their usage as the corpus readers count it (none when no
    line reports usage)."""
    from ouroboros_gates.harness.reader import Reader  # the readers: only such files need them
    from ouroboros_gates.harness.stats import Tally

    reader = Reader(files, "session")
    tally = Tally.of(reader)
    usage = tally.usage
    found = [(float(usage.cache_read_input_tokens), float(usage.prompt_tokens))] if tally.agent_usage else []
    return _FileSums(
        reader.lines, reader.malformed_count, [] if tally.cache_unreported else found, tally.cache_unreported
    )


def _read_part(part: _Part) -> _FileSums:
    return _read_file(part) if isinstance(part, Path) else _read_session(part)


PARALLEL_BYTES = 16 * 1024 * 1024
"""From this many bytes (over at least ``PARALLEL_FILES`` files) the files are read by several processes."""

PARALLEL_FILES = 8


def _workers(parts: Sequence[_Part]) -> int:
    """How many processes read ``parts``: one per available core (at most four) when there is enough."""
    if not hasattr(os, "fork") or len(parts) < PARALLEL_FILES:
        return 1
    if _total_bytes(parts) < PARALLEL_BYTES:
        return 1
    return max(1, min(4, _available_cores()))


def _total_bytes(parts: Sequence[_Part]) -> int:
    """The size of every file of ``parts``."""
    return sum(path.stat().st_size for part in parts for path in _files(part))


def _available_cores() -> int:
    """The cores this process may run on (all of them where the platform cannot say)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _read_all(parts: Sequence[_Part]) -> list[_FileSums]:
    """Each part's sums, in the order given: the parts split into one contiguous share per process, the
    first share read here and the others by forked children, whose sums come back over a pipe."""
    count = _workers(parts)
    if count == 1:
        return [_read_part(part) for part in parts]
    return _read_shares(_shares(parts, count))


def _shares(parts: Sequence[_Part], count: int) -> list[Sequence[_Part]]:
    """``parts`` split into at most ``count`` contiguous shares of equal size (the last one shorter)."""
    size = -(-len(parts) // count)
    return [parts[i : i + size] for i in range(0, len(parts), size)]


def _read_shares(shares: Sequence[Sequence[_Part]]) -> list[_FileSums]:
    """The sums of every share, in order: the first read here, each other one by a forked child."""
    children: list[Child] = []
    answers: list[bytes] = []
    try:
        children += [fork_child(partial(_share_sums, share)) for share in shares[1:]]
        found = [_read_part(part) for part in shares[0]]
    finally:  # every child waited for and its pipe closed, even when this share or a fork failed
        answers += [child.answer() for child in children]
    for answer, share in zip(answers, shares[1:], strict=True):
        found += _child_sums(answer, share)
    return found


def _child_sums(answer: bytes, share: Sequence[_Part]) -> list[_FileSums]:
    """The sums a child sent back for ``share``; the ``OSError`` it met (or its death) raised here."""
    died = {"errno": None, "strerror": "its reader died", "filename": str(_files(share[0])[0])}
    doc = orjson.loads(answer) if answer else died
    if isinstance(doc, dict):  # the child's error, as it would have been raised here
        raise OSError(doc["errno"], doc["strerror"], doc["filename"])
    return [
        _FileSums(lines, malformed, [(r, p) for r, p in usages], unreported)
        for lines, malformed, usages, unreported in doc
    ]


def _share_sums(parts: Sequence[_Part]) -> bytes:
    """In a child: the sums of ``parts`` (or the ``OSError`` it met) as JSON."""
    try:
        doc: Any = [[f.lines, f.malformed, f.usages, f.unreported] for f in map(_read_part, parts)]
    except OSError as exc:
        doc = {"errno": exc.errno, "strerror": exc.strerror, "filename": exc.filename}
    except Exception as exc:  # anything else, named in the parent's error
        doc = {
            "errno": None,
            "strerror": f"{type(exc).__name__}: {exc}",
            "filename": str(_files(parts[0])[0]),
        }
    return orjson.dumps(doc)


def read_h_fleet(paths: Sequence[Path]) -> HFleet:
    """h_fleet and each file's h_r over ``paths``, read in the order given (raises ``OSError``)."""
    return read_h_fleet_runs([(run_name(path), (path,)) for path in paths])


def read_h_fleet_runs(runs: Sequence[tuple[str, Sequence[Path]]]) -> HFleet:
    """h_fleet and each run's h_r over ``(name, files)`` runs (``harness.expand``), in the order given."""
    read = _read_runs(runs)
    every = [found for _, _, sums in read for found in sums]
    ratios = tuple(RunRatio(name, *_summed(sums)) for name, _, sums in read)
    return HFleet(*_summed(every), ratios, *_tallies(every), *_notes(read))


_ReadRun = tuple[str, list[_Part], list[_FileSums]]
"""A run's name, its parts, and the sums read from each."""


def _read_runs(runs: Sequence[tuple[str, Sequence[Path]]]) -> list[_ReadRun]:
    """Each run split into its parts, and the sums of each part, the parts of every run read together."""
    split = [(name, _parts(paths)) for name, paths in runs]
    read_parts = iter(_read_all([part for _, parts in split for part in parts]))
    return [(name, parts, [next(read_parts) for _ in parts]) for name, parts in split]


def _tallies(every: Sequence[_FileSums]) -> tuple[int, int, int]:
    """Lines, result lines and malformed result lines over every part."""
    return (
        sum(found.lines for found in every),
        sum(len(found.usages) for found in every),
        sum(found.malformed for found in every),
    )


def _notes(read: Sequence[_ReadRun]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Why each run without h_r has none, and the files read as result lines that hold nothing known."""
    notes: list[str] = []
    unread: list[str] = []
    for name, parts, sums in read:
        notes += _why_none(name, parts, sums)
        unread += _unread(parts, sums)
    return tuple(notes), tuple(unread)


def _summed(sums: Iterable[_FileSums]) -> tuple[float, float]:
    """Σ cache_read and Σ prompt over the result lines, added in file order, then line order, as jq adds
    them."""
    total_read = total_prompt = 0.0
    for found in sums:
        for read, prompt in found.usages:
            total_read, total_prompt = total_read + read, total_prompt + prompt
    return total_read, total_prompt


def _unread(parts: Sequence[_Part], sums: Sequence[_FileSums]) -> list[str]:
    """A run's files read as result lines that held no result and are in no known format."""
    return [str(path) for path in _empty_result_files(parts, sums) if format_of(path) is Format.UNKNOWN]


def _empty_result_files(parts: Sequence[_Part], sums: Sequence[_FileSums]) -> list[Path]:
    """A run's files read as result lines that held no result line."""
    return [
        part for part, found in zip(parts, sums, strict=True) if isinstance(part, Path) and not found.usages
    ]


def _why_none(name: str, parts: Sequence[_Part], sums: Sequence[_FileSums]) -> list[str]:
    """Why a run has no h_r: its format reports no cache, or its result-line files hold no result line."""
    if any(found.unreported for found in sums):
        return [f"{name}: its log reports no cache counts (SWE-agent): no h_r"]
    cut = [
        path
        for path in _empty_result_files(parts, sums)
        if format_of(path) in (Format.ENVELOPE, Format.STREAM_JSON)
    ]
    if cut and not any(found.usages for found in sums):
        return [
            f"{name}: no result line in {', '.join(map(str, cut))} (a process killed before its result, or "
            "no "
            "usage reported): no h_r"
        ]
    return []
