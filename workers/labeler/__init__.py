"""The labeler: real labels for tickets whose proposal named no real instance, from a local model on an
otherwise idle GPU, accepted only when they reproduce.

    job = complete(request, forge.ticket(44))                  # 1. the request made whole
    found = prefilter(sources, terms_of(job.facts, job.predicate), limit=48)   # 2. IDF candidates
    result = Labeler(chat, model, sharing, state_dir).run([Plan(job, sources, reproduce)])  # 3. + 4.
    judge(True, quote, instance, Span(file=f, line=n), line_text, job.words)   # the acceptance rule alone

``label_tickets(settings, tickets, forge, runs)`` is all of it from the settings; ``GpuAutoscaler`` scales
the ``gpu`` queue's pool. Pure modules; ``tasks`` holds the Celery task ``labeler.label``.
"""

from __future__ import annotations

from ouroboros_gates.workers.labeler.acceptance import Verdict, decode_escapes, fragments, judge, lifted
from ouroboros_gates.workers.labeler.autoscale import GPU_QUEUE, GpuAutoscaler, target_processes
from ouroboros_gates.workers.labeler.core import known_runs, label_tickets, run_events
from ouroboros_gates.workers.labeler.gpu import (
    DockerEngine,
    DockerError,
    GpuSharing,
    has_gpu,
    keep_alive_s,
    sharing_from_settings,
)
from ouroboros_gates.workers.labeler.prefilter import (
    CUT,
    Candidate,
    Prefiltered,
    Source,
    prefilter,
    read_line,
)
from ouroboros_gates.workers.labeler.prompt import SCHEMA, request_for
from ouroboros_gates.workers.labeler.request import Job, complete, proposal_fields
from ouroboros_gates.workers.labeler.run import LABELS, RECORD, Labeler, Plan, RunResult
from ouroboros_gates.workers.labeler.sources import miner_reproducer, sources_for
from ouroboros_gates.workers.labeler.terms import Term, terms_of

__all__ = [
    "CUT",
    "GPU_QUEUE",
    "LABELS",
    "RECORD",
    "SCHEMA",
    "Candidate",
    "DockerEngine",
    "DockerError",
    "GpuAutoscaler",
    "GpuSharing",
    "Job",
    "Labeler",
    "Plan",
    "Prefiltered",
    "RunResult",
    "Source",
    "Term",
    "Verdict",
    "complete",
    "decode_escapes",
    "fragments",
    "has_gpu",
    "judge",
    "keep_alive_s",
    "known_runs",
    "label_tickets",
    "lifted",
    "miner_reproducer",
    "prefilter",
    "proposal_fields",
    "read_line",
    "request_for",
    "run_events",
    "sharing_from_settings",
    "sources_for",
    "target_processes",
    "terms_of",
]
