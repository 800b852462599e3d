"""What a job searches: its corpus kinds turned into sources, and the miner that can reproduce a label.

``jsonl``: every harness run (``<state>/*/events.jsonl`` and the runs the log recorded), each of its files
(``harness.run_at``: a Claude Code session's transcript and its subagents') read lazily from disk.
``issue`` and ``pull_request``: every ticket and pull request of the forge other than the ticket itself,
one line per line of its title, body and comments (commits too, for a pull request).
``file_at``: the commits of the forge's pull requests and the commits the request names, each as its
message and the files it changed as they stood at it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from ouroboros_gates.forge import Commit, Forge, NotFoundError, PullRequest, Ticket
from ouroboros_gates.forge.base import COMMIT_NAME
from ouroboros_gates.harness import run_at
from ouroboros_gates.miners import CorpusItem, Miner, MinerError, extract_facts, find_miner
from ouroboros_gates.miners.corpus import JSONL
from ouroboros_gates.schemas import CorpusKind, Span, Text
from ouroboros_gates.workers.labeler.acceptance import Reproducer
from ouroboros_gates.workers.labeler.prefilter import Source
from ouroboros_gates.workers.labeler.request import Job

__all__ = ["MAX_FILE_BYTES", "miner_reproducer", "sources_for"]

MAX_FILE_BYTES = 2_000_000
"""A changed file larger than this is not searched for ``file_at`` (generated or vendored, not written)."""


def _ticket_lines(ticket: Ticket) -> tuple[str, ...]:
    lines = [ticket.title, *ticket.body.splitlines()]
    for comment in ticket.comments:
        lines += comment.body.splitlines()
    return tuple(lines)


def _pull_lines(pull: PullRequest) -> tuple[str, ...]:
    lines = [pull.title, *pull.body.splitlines()]
    for commit in pull.commits:
        lines += commit.message.splitlines()
    return tuple(lines)


def sources_for(job: Job, runs: Mapping[str, Path], forge: Forge | None) -> tuple[list[Source], list[str]]:
    """The sources of ``job``'s corpus kinds, in a fixed order, and a note for each kind not searched."""
    sources: list[Source] = []
    notes: list[str] = []
    for kind in job.corpus:
        if kind is CorpusKind.JSONL:
            sources += _run_sources(runs, notes)
        elif forge is None:
            notes.append(f"{kind.value}: no forge configured, not searched")
        else:
            sources += _FORGE_SOURCES[kind](job, forge, notes)
    return sources, notes


def _run_sources(runs: Mapping[str, Path], notes: list[str]) -> list[Source]:
    """``jsonl``: each file of every harness run, in run order."""
    if not runs:
        notes.append("no harness runs to search (jsonl)")
    return [
        Source(run, str(file), path=file) for run, path in sorted(runs.items()) for file in run_at(path).files
    ]


def _ticket_sources(job: Job, forge: Forge, notes: list[str]) -> list[Source]:
    """``issue``: every ticket but the job's own."""
    return [
        Source(f"#{ticket.number}", f"#{ticket.number}", text=_ticket_lines(ticket))
        for ticket in forge.tickets()
        if ticket.number != job.ticket
    ]


def _pull_sources(job: Job, forge: Forge, notes: list[str]) -> list[Source]:
    """``pull_request``: every pull request."""
    return [
        Source(f"#{pull.number}", f"#{pull.number}", text=_pull_lines(pull)) for pull in forge.pull_requests()
    ]


def _file_at_sources(job: Job, forge: Forge, notes: list[str]) -> list[Source]:
    """``file_at``: the pull requests' commits and the commits the job names."""
    listed = {c.sha: c for pull in forge.pull_requests() for c in pull.commits}
    named = {sha for sha in job.instances if COMMIT_NAME.fullmatch(sha)}
    return _commit_sources(forge, sorted(listed.keys() | named), listed, notes)


_FORGE_SOURCES: dict[CorpusKind, Callable[[Job, Forge, list[str]], list[Source]]] = {
    CorpusKind.ISSUE: _ticket_sources,
    CorpusKind.PULL_REQUEST: _pull_sources,
    CorpusKind.FILE_AT: _file_at_sources,
}
"""The sources of each corpus kind read from the forge."""


def _commit_sources(
    forge: Forge, shas: list[str], listed: Mapping[str, Commit], notes: list[str]
) -> list[Source]:
    """``file_at``: each commit's message, then each file it changed as it stood at the commit (text files
    up to ``MAX_FILE_BYTES``), one source per file named ``<sha>:<path>``; the instance is the full sha. A
    pull request's commit the repository does not hold is searched by its message alone."""
    sources: list[Source] = []
    seen: set[str] = set()
    for sha in shas:
        commit = _held_commit(forge, sha, listed, notes)
        if commit is None or commit.sha in seen:
            continue
        seen.add(commit.sha)
        sources += _commit_texts(forge, commit, notes)
    return sources


def _held_commit(forge: Forge, sha: str, listed: Mapping[str, Commit], notes: list[str]) -> Commit | None:
    """The commit as the repository holds it, else as its pull request lists it; None (noted) when neither
    knows it."""
    try:
        return forge.commit(sha)
    except NotFoundError:
        if sha in listed:
            return listed[sha]
        notes.append(f"file_at: no commit {sha} in the repository")
        return None


def _commit_texts(forge: Forge, commit: Commit, notes: list[str]) -> list[Source]:
    """A commit's message, then each file it changed that can be searched."""
    sources = [Source(commit.sha, f"commit {commit.sha}", text=tuple(commit.message.splitlines()))]
    for path in commit.files:
        source = _file_source(forge, commit.sha, path, notes)
        if source is not None:
            sources.append(source)
    return sources


def _file_source(forge: Forge, sha: str, path: str, notes: list[str]) -> Source | None:
    """A changed file as it stood at the commit; None when the commit deleted it, or (noted) when it is
    binary or too large to search."""
    try:
        data = forge.file_at(sha, path)
    except NotFoundError:
        return None  # the commit deleted it
    if len(data) > MAX_FILE_BYTES or b"\0" in data[:8192]:
        notes.append(f"file_at: {sha[:12]}:{path} not searched (binary or over {MAX_FILE_BYTES} bytes)")
        return None
    lines = tuple(data.decode("utf-8", "replace").splitlines())
    return Source(sha, f"{sha}:{path}", text=lines)


def miner_reproducer(job: Job, runs: Mapping[str, Path]) -> tuple[Reproducer | None, str]:
    """The ticket's miner as a reproducer when it is registered and reads runs; else None, and why."""
    if not job.miner:
        return None, "the ticket names no miner: labels are checked by their quotes"
    try:
        miner = find_miner(job.miner)
    except MinerError:
        return None, f"miner {job.miner} is not registered: labels are checked by their quotes"
    if JSONL not in miner.corpus:
        return None, f"miner {job.miner} reads {', '.join(miner.corpus)}: labels are checked by their quotes"
    lines: dict[str, set[tuple[str, int]]] = {}

    def reproduce(instance: str, where: Span) -> tuple[bool, str]:
        path = runs.get(instance)
        if path is None:
            return False, f"{instance} is not a run {miner.name} can read"
        if instance not in lines:
            lines[instance] = _named_lines(miner, instance, path)
        return _reproduced(miner.name, instance, where, lines[instance])

    return reproduce, f"labels are checked by miner {miner.name}"


def _named_lines(miner: Miner, instance: str, path: Path) -> set[tuple[str, int]]:
    """The (file, line) places of the run's facts that name the run, as the miner extracts them."""
    item = CorpusItem(JSONL, instance, path, run_at(path).files)  # a session with its subagents
    facts = extract_facts(miner, [item]).facts.get(instance, ())
    return {(f.span.file, f.span.line) for f in facts if Text(text=instance) in f.args and f.span is not None}


def _reproduced(name: str, instance: str, where: Span, named: set[tuple[str, int]]) -> tuple[bool, str]:
    """Whether the miner's facts name the run at the label's line, and else where they do."""
    here = sorted(line for file, line in named if file == where.file)
    if where.line in here:
        return True, f"miner {name} reproduces it: its facts name {instance} at line {where.line}"
    if not named:
        return False, f"miner {name}'s facts do not name {instance}"
    if not here:
        return False, f"miner {name}'s facts name {instance} in other files of the run, not in {where.file}"
    near = ", ".join(str(line) for line in here[:8])
    return False, f"miner {name}'s facts name {instance} at line(s) {near}, not at line {where.line}"
