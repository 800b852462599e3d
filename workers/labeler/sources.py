"""What a job searches: its corpus kinds turned into sources, and the miner that can reproduce a label.

``jsonl``: every harness run (``<state>/*/events.jsonl`` and the runs the log recorded), read lazily from
disk. ``issue`` and ``pull_request``: every ticket and pull request of the forge other than the ticket
itself, one line per line of its title, body and comments (commits too, for a pull request).
``file_at``: the commits of the forge's pull requests, one line per line of the message.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from events.forge import Forge, PullRequest, Ticket
from miners import CorpusItem, MinerError, extract_facts, find_miner
from miners.corpus import JSONL
from schemas import CorpusKind, Text
from workers.labeler.acceptance import Reproducer
from workers.labeler.prefilter import Source
from workers.labeler.request import Job

__all__ = ["miner_reproducer", "sources_for"]


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
            sources += [Source(run, str(path), path=path) for run, path in sorted(runs.items())]
            if not runs:
                notes.append("no harness runs to search (jsonl)")
        elif forge is None:
            notes.append(f"{kind.value}: no forge configured, not searched")
        elif kind is CorpusKind.ISSUE:
            for ticket in forge.tickets():
                if ticket.number != job.ticket:
                    name = f"#{ticket.number}"
                    sources.append(Source(name, name, text=_ticket_lines(ticket)))
        elif kind is CorpusKind.PULL_REQUEST:
            for pull in forge.pull_requests():
                name = f"#{pull.number}"
                sources.append(Source(name, name, text=_pull_lines(pull)))
        else:
            commits = {c.sha: c for pull in forge.pull_requests() for c in pull.commits}
            for sha, commit in sorted(commits.items()):
                sources.append(Source(sha, f"commit {sha}", text=tuple(commit.message.splitlines())))
    return sources, notes


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
    lines: dict[str, set[int]] = {}

    def reproduce(instance: str, line: int) -> tuple[bool, str]:
        path = runs.get(instance)
        if path is None:
            return False, f"{instance} is not a run {miner.name} can read"
        if instance not in lines:
            item = CorpusItem(JSONL, instance, path, (path,))
            facts = extract_facts(miner, [item]).facts.get(instance, ())
            named = [f for f in facts if Text(text=instance) in f.args and f.span is not None]
            lines[instance] = {f.span.line for f in named if f.span is not None}
        if line in lines[instance]:
            return True, f"miner {miner.name} reproduces it: its facts name {instance} at line {line}"
        if not lines[instance]:
            return False, f"miner {miner.name}'s facts do not name {instance}"
        near = ", ".join(str(n) for n in sorted(lines[instance])[:8])
        return False, f"miner {miner.name}'s facts name {instance} at line(s) {near}, not at line {line}"

    return reproduce, f"labels are checked by miner {miner.name}"
