"""One labeler run: for each ticket, prefilter, label in batches, accept; the record kept live on disk.

Every label is appended to ``<state>/labeler.jsonl`` as its batch ends, and the run record (``LabelerRun``)
is rewritten to ``<state>/labeler.json`` at the start, before and after every batch and while yielding
the GPU, so the ops page follows the run. A batch whose model call fails is recorded with why and the
run goes on; an account refused or a budget exhausted stops it. With no model configured, every
candidate is counted and the requests stay queued, and the record says so.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from ouroboros_gates.llm import AccountError, BudgetExhausted, ChatReply, ChatRequest, LlmError
from ouroboros_gates.schemas import LabelerRun, LabelerStatus, ProposedLabel, Span
from ouroboros_gates.workers.labeler.acceptance import Reproducer, judge
from ouroboros_gates.workers.labeler.gpu import DEFAULT_LOOK_S, GpuSharing, keep_alive_s
from ouroboros_gates.workers.labeler.prefilter import Candidate, Source, prefilter, read_line
from ouroboros_gates.workers.labeler.prompt import Answer, read_answers, request_for
from ouroboros_gates.workers.labeler.request import Job
from ouroboros_gates.workers.labeler.terms import terms_of

__all__ = ["LABELS", "RECORD", "ChatFn", "Labeler", "Plan", "RunResult"]

RECORD = "labeler.json"
LABELS = "labeler.jsonl"

ChatFn = Callable[[ChatRequest, float], ChatReply]
"""One model call with the keep-alive (seconds) it carries."""


@dataclass(frozen=True)
class Plan:
    """One ticket, ready to label: its job, what to search, and how its positives reproduce."""

    job: Job
    sources: Sequence[Source]
    reproduce: Reproducer | None = None
    notes: Sequence[str] = ()


@dataclass(frozen=True)
class RunResult:
    """What a run proposed and its final record."""

    labels: tuple[ProposedLabel, ...]
    record: LabelerRun


class _Stop(Exception):
    """The run cannot go on (the account is refused, the budget is spent, the GPU never came back)."""


@dataclass
class Labeler:
    """Runs the labeler's four steps over a list of tickets; ``chat`` None means no model is configured."""

    chat: ChatFn | None
    model: str
    sharing: GpuSharing
    state_dir: Path
    batch_size: int = 8
    max_candidates: int = 48
    yield_deadline_s: float = 3600.0
    now: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    monotonic: Callable[[], float] = time.monotonic
    _record: LabelerRun | None = field(default=None, init=False)
    _starts: list[float] = field(default_factory=list, init=False)
    _loads: list[float] = field(default_factory=list, init=False)
    _walls: list[float] = field(default_factory=list, init=False)

    def run(self, plans: Sequence[Plan], sharing_note: str = "") -> RunResult:
        """Label every ticket of ``plans``; the record ends completed, or failed when the run had to stop."""
        self._begin(plans, sharing_note)
        labels, status = self._label_all(plans)
        self._closing_notes(plans)
        self._update(status=status, ended=max(self.now(), self._current.started))
        return RunResult(tuple(labels), self._current)

    def _begin(self, plans: Sequence[Plan], sharing_note: str) -> None:
        """The run's first record, saved."""
        self._record = LabelerRun(
            started=self.now(),
            tickets=tuple(p.job.ticket for p in plans),
            model=self.model,
            keep_alive_s=keep_alive_s([], []),
            status=LabelerStatus.RUNNING,
            notes=tuple(n for n in (sharing_note,) if n),
        )
        self._save()

    def _label_all(self, plans: Sequence[Plan]) -> tuple[list[ProposedLabel], LabelerStatus]:
        """The labels of each ticket in turn, and how the run ends: completed, or failed (noted) when it
        had to stop."""
        labels: list[ProposedLabel] = []
        try:
            for plan in plans:
                labels += self._ticket(plan)
        except _Stop as exc:
            self._update(notes=(*self._current.notes, str(exc)))
            return labels, LabelerStatus.FAILED
        return labels, LabelerStatus.COMPLETED

    def _closing_notes(self, plans: Sequence[Plan]) -> None:
        """Note that nothing was labelled without a model, and the GPU sharing's notes not yet said."""
        if self.chat is None:
            queued = (
                f"no model configured (OURO_MODEL): {len(plans)} request(s) stay queued, nothing labelled"
            )
            self._update(notes=(*self._current.notes, queued))
        self._update(
            notes=(*self._current.notes, *(n for n in self.sharing.notes if n not in self._current.notes))
        )

    @property
    def _current(self) -> LabelerRun:
        assert self._record is not None, "no run in progress"
        return self._record

    def _update(self, **changes: object) -> None:
        self._record = LabelerRun.model_validate({**self._current.model_dump(), **changes})
        self._save()

    def _save(self) -> None:
        _atomic_write(self.state_dir / RECORD, self._current.model_dump_json(indent=2) + "\n")

    def _note(self, note: str) -> None:
        self._update(notes=(*self._current.notes, note))

    def _ticket(self, plan: Plan) -> list[ProposedLabel]:
        job = plan.job
        for note in (*job.notes, *plan.notes):
            self._note(f"#{job.ticket}: {note}")
        terms = terms_of(job.facts, job.predicate)
        if not terms:
            self._note(f"#{job.ticket}: no terms in its fact lines or predicate, nothing to search")
            return []
        found = prefilter(plan.sources, terms, limit=self.max_candidates)
        self._update(candidates=self._current.candidates + found.found)
        if self.chat is None:
            self._note(f"#{job.ticket}: {found.found} candidates wait for a model")
            return []
        if len(found.candidates) < found.found:
            self._note(
                f"#{job.ticket}: {found.found} candidates, the best {len(found.candidates)} sent to the model"
            )
        return self._label_batches(self.chat, plan, list(found.candidates))

    def _label_batches(self, chat: ChatFn, plan: Plan, candidates: list[Candidate]) -> list[ProposedLabel]:
        """The labels of the ticket's candidates, ``batch_size`` a model call."""
        by_name = {source.name: source for source in plan.sources}
        labels: list[ProposedLabel] = []
        for first in range(0, len(candidates), self.batch_size):
            batch = candidates[first : first + self.batch_size]
            labels += self._batch(chat, plan, batch, by_name)
        return labels

    def _batch(
        self, chat: ChatFn, plan: Plan, batch: list[Candidate], by_name: dict[str, Source]
    ) -> list[ProposedLabel]:
        self._wait_for_gpu()
        keep, number = self._start_batch()
        reply = self._ask(chat, request_for(plan.job, batch), keep, number)
        if reply is None:
            return []
        answers, problems = read_answers(reply.data, batch)
        if not answers:
            self._failed(number, "; ".join(problems) or "the reply labels nothing")
            return []
        labels = [_judged(plan, answer, by_name[answer.candidate.file]) for answer in answers]
        self._keep_labels(number, labels, problems)
        return labels

    def _wait_for_gpu(self) -> None:
        """Yield while another container holds the GPU, looking again every median batch; ``_Stop`` once
        the deadline has passed."""
        look_s = statistics.median(self._walls) if self._walls else DEFAULT_LOOK_S
        try:
            self.sharing.wait_turn(look_s, self._yielding, self.yield_deadline_s)
        except TimeoutError as exc:
            raise _Stop(f"stopped: {exc}") from exc

    def _start_batch(self) -> tuple[float, int]:
        """A batch begins: the keep-alive it carries and its number, its start kept and counted."""
        keep = keep_alive_s(self._starts, self._loads)
        self._starts.append(self.monotonic())
        self._update(status=LabelerStatus.RUNNING, keep_alive_s=keep, batches=self._current.batches + 1)
        return keep, self._current.batches

    def _keep_labels(self, number: int, labels: list[ProposedLabel], problems: Sequence[str]) -> None:
        """Append a batch's labels to the labels file, and count them and note its problems in the record."""
        _append(self.state_dir / LABELS, labels)
        accepted = sum(label.acceptance.value == "ACCEPTANCE_ACCEPTED" for label in labels)
        rejected = sum(label.acceptance.value == "ACCEPTANCE_REJECTED" for label in labels)
        notes = [f"batch {number}: {p}" for p in problems]
        self._update(
            accepted=self._current.accepted + accepted,
            rejected=self._current.rejected + rejected,
            notes=(*self._current.notes, *notes),
        )

    def _ask(self, chat: ChatFn, request: ChatRequest, keep: float, number: int) -> ChatReply | None:
        """The model's reply to batch ``number`` (its wall and load time kept for the next batches' keep-alive
        and turns); None when the call failed (the batch counted as failed); ``_Stop`` when the account or
        budget is spent."""
        try:
            reply = chat(request, keep)
        except (AccountError, BudgetExhausted) as exc:
            raise _Stop(f"stopped at batch {number}: {type(exc).__name__}: {exc}") from exc
        except LlmError as exc:
            self._failed(number, f"{type(exc).__name__}: {exc}")
            return None
        self._walls.append(reply.wall_s)
        if reply.load_s is not None:
            self._loads.append(reply.load_s)
        return reply

    def _failed(self, number: int, why: str) -> None:
        self._update(
            failed_batches=self._current.failed_batches + 1,
            notes=(*self._current.notes, f"batch {number} failed: {why}"),
        )

    def _yielding(self, holders: list[str]) -> None:
        note = f"yielding the GPU to {', '.join(holders)}"
        notes = self._current.notes if note in self._current.notes else (*self._current.notes, note)
        self._update(status=LabelerStatus.YIELDING, notes=notes)


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(temporary, path)


def _append(path: Path, labels: Sequence[ProposedLabel]) -> None:
    with path.open("a", encoding="utf-8") as out:
        for label in labels:
            out.write(label.model_dump_json() + "\n")


def _judged(plan: Plan, answer: Answer, source: Source) -> ProposedLabel:
    """One answer as a proposed label, with the acceptance's verdict on it."""
    where = Span(file=answer.candidate.file, line=answer.line)
    verdict = judge(
        answer.positive,
        answer.quote,
        answer.candidate.instance,
        where,
        read_line(source, answer.line),
        plan.job.words,
        plan.reproduce,
    )
    return ProposedLabel(
        ticket=plan.job.ticket,
        instance=answer.candidate.instance,
        positive=answer.positive,
        quote=answer.quote,
        reason=answer.reason,
        span=where,
        acceptance=verdict.acceptance,
        why=verdict.why,
    )
