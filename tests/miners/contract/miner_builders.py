"""Builders for the miner contract tests: facts and labels without any files."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from ouroboros_gates.miners import Extracted, Labels
from ouroboros_gates.schemas import Fact, LabelRow, Number, Span, Text

DRAFT_PR_LATE = """\
/* predicate invisible(R): run R stayed invisible for longer than the knee. */
invisible(R) :- gated(R), score(R, S), knee(K), gt(S, K).
"""

T0 = datetime(2026, 10, 1, tzinfo=UTC)


def facts_for(scores: dict[str, float]) -> Extracted:
    """``gated(i)`` and ``score(i, s)`` per instance, each instance in its own file ``<i>.jsonl``."""
    facts = {
        instance: (
            Fact(predicate="gated", args=(Text(text=instance),), span=Span(file=f"{instance}.jsonl", line=1)),
            Fact(
                predicate="score",
                args=(Text(text=instance), Number(number=score)),
                span=Span(file=f"{instance}.jsonl", line=2),
            ),
        )
        for instance, score in scores.items()
    }
    return Extracted(facts, {f"{instance}.jsonl": instance for instance in scores})


def labels_for(rows: list[tuple[str, bool, float, float | None]]) -> Labels:
    """Labels from ``(instance, positive, start hours after T0, flagged seconds after start or None)``."""
    built = []
    for instance, positive, hours, flagged in rows:
        start = T0 + timedelta(hours=hours)
        moment = None if flagged is None else start + timedelta(seconds=flagged)
        built.append(
            LabelRow(instance=instance, positive=positive, start=start, flagged=moment, source="test")
        )
    return Labels("labels.tsv", tuple(built), tuple(range(1, len(built) + 1)))
