"""The synthetic seed: small labelled repositories under ``ruleset/memory/`` analysed by our own instruments.
``ouro learn memory ship`` builds them into the shipped memory with the other shipped sources;
``corpus_memory``
is what a push or a scan retrieves from: the shipped memory beside the store's examples.
"""

from __future__ import annotations

import hashlib
import tempfile
import tomllib
from dataclasses import replace
from pathlib import Path

from ouroboros_gates.decider.analyse import analyse
from ouroboros_gates.decider.features import feature_set_digest
from ouroboros_gates.decider.instruments.base import RULESET
from ouroboros_gates.decider.memory import Memory, MemoryExample, MemoryStore, example_from_record
from ouroboros_gates.decider.shipped import load_shipped
from ouroboros_gates.forge.git import git

__all__ = ["SEED_DIR", "build_seed_memory", "corpus_memory", "leave_one_group_out", "seed_digest"]

SEED_DIR = RULESET / "memory"
_IDENTITY = {
    "GIT_AUTHOR_NAME": "seed",
    "GIT_AUTHOR_EMAIL": "seed@example.invalid",
    "GIT_COMMITTER_NAME": "seed",
    "GIT_COMMITTER_EMAIL": "seed@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+00:00",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+00:00",
}


def _files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*.seed") if p.is_file())


def seed_digest(directory: Path = SEED_DIR) -> str:
    """sha256 of the seed files, the labels and the feature set: a change rebuilds the seed examples."""
    digest = hashlib.sha256(feature_set_digest().encode())
    for path in [*_files(directory), directory / "labels.toml"]:
        digest.update(str(path.relative_to(directory)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _git(repo: Path, *args: str) -> None:
    git(*args, cwd=repo, env=_IDENTITY)


def build_seed_memory(directory: Path = SEED_DIR) -> tuple[Memory, list[str]]:
    """The seed's examples, and the labels that matched no candidate (reach misses, named)."""
    spec = tomllib.loads((directory / "labels.toml").read_text())
    digest = seed_digest(directory)
    with tempfile.TemporaryDirectory(prefix="ouro-seed-") as tmp:
        repo = Path(tmp)
        _commit_seed(directory, repo)
        found = {
            (a.candidate.path, a.candidate.function, a.candidate.family): a
            for a in analyse(repo, "HEAD", None, "seed/memory")
        }
    examples: list[MemoryExample] = []
    missed: list[str] = []
    for label in spec["labels"]:
        key = (label["path"], label["function"], label["family"])
        item = found.get(key)
        if item is None:
            missed.append("::".join(key))
            continue
        example = example_from_record(
            item.record,
            y=label["y"],
            code=item.code,
            start_line=item.start_line,
            source=spec["source"],
            group=f"seed/{label['path'].split('/', 1)[0]}",
            focus=sorted({s.line for s in item.signals}),
            roles=item.roles,
        )
        examples.append(_with_digest(example, digest))
    return Memory(examples), missed


def _commit_seed(directory: Path, repo: Path) -> None:
    """The seed's files (their ``.seed`` suffix dropped) committed to a fresh repository."""
    for path in _files(directory):
        target = repo / path.relative_to(directory).with_suffix("")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "--no-verify", "-m", "seed")


def _with_digest(example: MemoryExample, digest: str) -> MemoryExample:
    return replace(example, label_set_digest=digest, id="")


def corpus_memory(store: MemoryStore | None) -> Memory:
    """The memory that ships (``decider.shipped``: the seed, the seeded pairs, SVEN and OWASP as feature
    records) beside what ``ouro learn memory build`` kept in the store (a seed an older version stored is left
    out: the shipped memory holds the current one)."""
    stored = store.load("static") if store is not None else Memory()
    return Memory([*load_shipped().examples, *(e for e in stored.examples if e.source != "seed")])


def leave_one_group_out(memory: Memory, k: int = 6) -> list[tuple[float, int]]:
    """(memory-vote score, label) of every example decided with its own group held out: how the packaged
    memory-vote program's ADVISORY threshold was read (recall >= 0.90)."""
    from ouroboros_gates.decider.classify import memory_vote
    from ouroboros_gates.decider.excerpt import make_excerpt
    from ouroboros_gates.decider.features import FEATURES
    from ouroboros_gates.decider.program import CandidateView
    from ouroboros_gates.decider.retrieve import (
        Boundary,
        Index,
        Settings,
        Target,
        columns_from_specs,
        retrieve,
    )

    index = Index(memory, columns_from_specs(FEATURES))
    scored = []
    for e in memory.examples:
        target = Target(e.example.x, e.example.instruments, e.family, group=e.group)
        found = retrieve(index, target, Boundary("evaluation", frozenset({e.group})), Settings(k=k))
        view = CandidateView(make_excerpt(e.excerpt, 1, e.example.language), "", (), e.family)
        scored.append((memory_vote(found, view, k=k).score, e.y))
    return scored
