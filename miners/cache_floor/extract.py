"""CACHE-FLOOR's extractor: one harness run in, its own prompt-cache hit ratio out.

    h_r = Σ cache_read / Σ (input + cache_creation + cache_read)

summed over the ``usage`` the corpus readers count for the run (``harness.stats.cache_ratio``), the one h_r
``ouro measure h-fleet`` and the ops page compute too (#235): a stream-json or CSF run's ``result`` lines (a
result's usage is authoritative for its turn; an ``assistant`` line's streaming snapshot is never counted), a
Claude Code session's responses each once with its subagents', an OpenHands run's responses. A run reopened
with ``--resume`` has several result lines, and they all count.

- ``ratio(R, H)``: run R's h_r in basis points, rounded down (``H = ⌊10000 · read / prompt⌋``), at
  the line of the last event that counted usage. Rounding down keeps the comparison exact: for a floor F in
  basis points, ``H < F`` exactly when ``h_r < F / 10000``. A run that counts no prompt token, or whose log
  reports no cache counts (a SWE-agent trajectory), has no ratio.

The floor itself is written in ``rules.dl`` (``floor(9867)``), not fitted: see the README. Pure:
reads the run, nothing else.
"""

from __future__ import annotations

from collections.abc import Iterator

from ouroboros_gates.harness import CACHE_UNREPORTED
from ouroboros_gates.miners.corpus import CorpusItem
from ouroboros_gates.schemas import Fact, Number, Span, Text

NAME = "cache-floor"
PACKAGE = "ouroboros_gates.miners.cache_floor"
VERDICTS = ("below_floor",)
SCOPE = "generic"
CORPUS = ("jsonl",)
SEVERITY = "SEVERITY_S3"
GATE = "warn"

BASIS_POINTS = 10_000


def basis_points(read: int, prompt: int) -> int:
    """``read / prompt`` in basis points, rounded down (exact integers, no float)."""
    return read * BASIS_POINTS // prompt


def extract(item: CorpusItem) -> Iterator[Fact]:
    """``ratio(R, H)`` for the run, when its usage counts any prompt token and its log reports the cache."""
    totals = _totals(item)
    if totals is None:
        return  # h_r unknown, not 0
    read, prompt, last = totals
    if prompt and last is not None:
        ratio = basis_points(read, prompt)
        yield Fact(predicate="ratio", args=(Text(text=item.instance), Number(number=ratio)), span=last)


def _totals(item: CorpusItem) -> tuple[int, int, Span | None] | None:
    """The run's cache-read and prompt tokens, and the line of its last usage; None when its log does not
    report the cache."""
    read = prompt = 0
    last: Span | None = None
    for event in item.events():
        if event.usage is not None:
            if event.subtype == CACHE_UNREPORTED:
                return None
            read += event.usage.cache_read_input_tokens
            prompt += event.usage.prompt_tokens
            last = event.span
    return read, prompt, last
