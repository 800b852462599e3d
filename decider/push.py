"""One push or scan end to end: analyse the repository, build the engine, decide, apply dismissals."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ouroboros_gates.decider.adapt import dismissals, user_memory
from ouroboros_gates.decider.analyse import Analysed, analyse
from ouroboros_gates.decider.assemble import Lookup, build_engine
from ouroboros_gates.decider.decide import Run, decide_all, dismiss, monotonic_deadline
from ouroboros_gates.decider.frameworks import Priors
from ouroboros_gates.decider.memory import Memory, MemoryStore
from ouroboros_gates.schemas.settings import Settings

__all__ = ["decide_repository"]


def decide_repository(
    settings: Settings,
    repo: Path,
    repo_key: str,
    head: str,
    base: str | None,
    *,
    store: MemoryStore | None,
    memory: Memory | None = None,
    deadline_s: float | None = None,
    analysed: Sequence[Analysed] | None = None,
    priors: Priors = "detected",
    progress: Callable[[int, int], None] | None = None,
) -> tuple[Run, Lookup]:
    """Decide every candidate of ``base..head`` (a scan of ``head`` when ``base`` is None) in ``repo``;
    ``analysed`` given (a folder scan read from disk) is decided as it is; ``priors``: which framework and
    library priors the analysis switches on (``detected``: what each file imports)."""
    deadline = monotonic_deadline(deadline_s)
    if analysed is None:
        analysed = analyse(repo, head, base, repo_key, priors=priors)
    kept = dismissals(repo) if settings.decider_adapt else []
    extra = user_memory(kept) if kept else None
    engine, lookup = build_engine(settings, repo_key, store=store, memory=memory, extra=extra)
    run = decide_all(analysed, engine, deadline=deadline, progress=progress)
    if kept:
        run = dismiss(run, {d["fingerprint"] for d in kept})
    return run, lookup
