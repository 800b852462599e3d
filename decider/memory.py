"""The local memory: labelled examples (features, label, content-addressed excerpt; never a rationale, never
a path or a repository name), in process for retrieval and in SQL for keeping.

An example enters a prompt only through ``retrieve.eligible``. User-local examples (``origin: user``, from a
user's dismissals) are read beside the corpus memory for that repository only and are never written to the
store: ``MemoryStore.save`` refuses them.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
from sqlalchemy import Connection, select, update

from ouroboros_gates.decider.embed import CachedEmbedder, Embedder
from ouroboros_gates.decider.excerpt import EXAMPLE_BOUNDS, make_excerpt, normalised_sha
from ouroboros_gates.events import SideTables
from ouroboros_gates.events.memory_tables import (
    memory_blobs,
    memory_embeddings,
    memory_examples,
    memory_programs,
)
from ouroboros_gates.schemas import Example, FeatureRecord, InstrumentState, Scalar
from ouroboros_gates.schemas.errors import OuroError

__all__ = ["Memory", "MemoryExample", "MemoryRefused", "MemoryStore", "example_from_record"]

Origin = Literal["corpus", "user"]


class MemoryRefused(OuroError):
    """An example that may not be stored or built (a user row, an empty excerpt)."""


@dataclass(frozen=True)
class MemoryExample:
    """One labelled example: what retrieval compares (x, instruments) and what a prompt shows (excerpt)."""

    example: Example
    excerpt: str
    source: str
    profile: str = "static"
    unit: str = "pin"
    frameworks: tuple[str, ...] = ()
    roles: tuple[str, ...] = ()
    label_set_digest: str = "0" * 64
    origin: Origin = "corpus"
    id: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.id:
            object.__setattr__(self, "id", hashlib.sha256(_canonical(self.row())).hexdigest())

    @property
    def family(self) -> str:
        """The example's family."""
        return self.example.family

    @property
    def tie_key(self) -> str:
        """What retrieval breaks an exact tie on: the example's content without its instruments' versions, so
        a new version of an instrument that changes no value cannot reorder equal neighbours."""
        row = self.row()
        row["instruments"] = {name: state["state"] for name, state in row["instruments"].items()}
        return hashlib.sha256(_canonical(row)).hexdigest()

    @property
    def y(self) -> int:
        """The label: 1 vulnerable, 0 not."""
        return self.example.y

    @property
    def group(self) -> str:
        """The repository group (balance rule and boundary)."""
        return self.example.group

    @property
    def embedding_key(self) -> str:
        """sha256 of the normalised excerpt: the key of its embedding per model."""
        return normalised_sha(self.excerpt)

    def row(self) -> dict[str, Any]:
        """The SQL row (without the excerpt text, which is a blob)."""
        e = self.example
        return {
            "family": e.family,
            "language": e.language,
            "profile": self.profile,
            "y": e.y,
            "source": self.source,
            "group_key": e.group,
            "frameworks": list(self.frameworks),
            "unit": self.unit,
            "x": dict(e.x),
            "instruments": {k: v.to_json_dict() for k, v in sorted(e.instruments.items())},
            "roles": list(self.roles),
            "excerpt_sha": e.excerpt_sha,
            "label_set_digest": self.label_set_digest,
        }


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode()


def example_from_record(
    record: FeatureRecord,
    *,
    y: Literal[0, 1],
    code: str,
    start_line: int,
    source: str,
    group: str,
    focus: Sequence[int] = (),
    frameworks: Sequence[str] = (),
    roles: Sequence[str] = (),
    origin: Origin = "corpus",
) -> MemoryExample:
    """An example from a labelled candidate's record and function code (excerpt at the example bounds)."""
    try:
        excerpt = make_excerpt(code, start_line, record.language, focus=focus, bounds=EXAMPLE_BOUNDS)
    except ValueError as exc:
        raise MemoryRefused(f"{record.candidate.family} example from {source}: {exc}") from exc
    example = Example(
        excerpt_sha=excerpt.sha,
        x=dict(record.x),
        instruments=dict(record.instruments),
        y=y,
        group=group,
        language=record.language,
        family=record.candidate.family,
    )
    return MemoryExample(
        example=example,
        excerpt=excerpt.text,
        source=source,
        profile=record.profile.value,
        unit=record.unit.value,
        frameworks=tuple(sorted(frameworks)),
        roles=tuple(roles),
        origin=origin,
    )


class Memory:
    """Examples in process, with their embeddings for one model (retrieval reads this)."""

    def __init__(self, examples: Iterable[MemoryExample] = ()) -> None:
        self._examples: dict[str, MemoryExample] = {}
        self.vectors: dict[str, np.ndarray] = {}
        self.embedding_model: str | None = None
        self.version = 0
        self.extend(examples)

    def __len__(self) -> int:
        return len(self._examples)

    @property
    def examples(self) -> list[MemoryExample]:
        """Every example, in insertion order."""
        return list(self._examples.values())

    def get(self, example_id: str) -> MemoryExample:
        """One example by id."""
        return self._examples[example_id]

    def add(self, example: MemoryExample) -> None:
        """Add one example; it changes retrieval at once (nothing is recompiled)."""
        if example.id not in self._examples:
            self._examples[example.id] = example
            self.version += 1

    def extend(self, examples: Iterable[MemoryExample]) -> None:
        """Add many."""
        for example in examples:
            self.add(example)

    def merged(self, other: Memory) -> Memory:
        """This memory and another (a user-local one) side by side, embeddings included."""
        both = Memory([*self.examples, *other.examples])
        both.vectors = {**self.vectors, **other.vectors}
        both.embedding_model = self.embedding_model or other.embedding_model
        return both

    @property
    def digest(self) -> str:
        """``memory_snapshot_digest``: sha256 of the sorted example ids."""
        return hashlib.sha256("\n".join(sorted(self._examples)).encode()).hexdigest()

    def embed(self, embedder: Embedder | CachedEmbedder) -> int:
        """Embed every example not embedded yet for the embedder's model; returns how many were new."""
        if self.embedding_model != embedder.model:
            self.vectors, self.embedding_model = {}, embedder.model
        missing = self._not_embedded()
        if missing:
            for key, vector in zip(missing, embedder.embed(list(missing.values())), strict=True):
                self.vectors[key] = _unit(vector)
            self.version += 1
        return len(missing)

    def _not_embedded(self) -> dict[str, str]:
        """The excerpts of the examples without a vector yet, by embedding key."""
        return {e.embedding_key: e.excerpt for e in self.examples if e.embedding_key not in self.vectors}

    def vector(self, example: MemoryExample) -> np.ndarray | None:
        """The example's unit vector, or None when it has none."""
        return self.vectors.get(example.embedding_key)


def _unit(vector: Sequence[float]) -> np.ndarray:
    array = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(array))
    return array / norm if norm else array


def _refuse_user_local(examples: Sequence[MemoryExample]) -> None:
    users = [e for e in examples if e.origin == "user"]
    if users:
        raise MemoryRefused(
            f"{len(users)} user-local example(s): user dismissals are never written to the store"
        )


class MemoryStore:
    """The memory's side tables (``events.side``): example rows, excerpt blobs, embeddings per model,
    programs."""

    def __init__(self, side: SideTables) -> None:
        self.side = side

    def save(self, memory: Memory | Iterable[MemoryExample]) -> int:
        """Store examples (idempotent by id); user-local examples are refused. Returns how many were new."""
        examples = memory.examples if isinstance(memory, Memory) else list(memory)
        _refuse_user_local(examples)
        with self.side.writing() as conn:
            have = set(conn.execute(select(memory_examples.c.id)).scalars())
            new = [e for e in examples if e.id not in have]
            _store_excerpts(conn, new)
            if new:
                conn.execute(memory_examples.insert(), [{"id": e.id, **e.row()} for e in new])
        return len(new)

    def load(self, profile: str | None = None) -> Memory:
        """Every stored example (of one profile), with its excerpt."""
        query = select(memory_examples, memory_blobs.c.text).join(
            memory_blobs, memory_blobs.c.sha == memory_examples.c.excerpt_sha
        )
        if profile:
            query = query.where(memory_examples.c.profile == profile)
        with self.side.reading() as conn:
            rows = list(conn.execute(query.order_by(memory_examples.c.id)).mappings())
        return Memory(_from_row(row) for row in rows)

    def get_blob(self, sha: str) -> str | None:
        """An excerpt by its sha, or None."""
        with self.side.reading() as conn:
            return conn.execute(
                select(memory_blobs.c.text).where(memory_blobs.c.sha == sha)
            ).scalar_one_or_none()

    def get_embeddings(self, model: str, shas: Sequence[str]) -> dict[str, list[float]]:
        """Cached vectors of one model for the given normalised shas."""
        t = memory_embeddings
        with self.side.reading() as conn:
            rows = conn.execute(
                select(t.c.sha, t.c.vector).where(t.c.model == model, t.c.sha.in_(list(shas)))
            )
            return {sha: np.frombuffer(base64.b64decode(v), dtype=np.float32).tolist() for sha, v in rows}

    def put_embeddings(self, model: str, vectors: Mapping[str, Sequence[float]]) -> None:
        """Cache vectors (float32, base64) of one model; an existing one is kept."""
        have = self.get_embeddings(model, list(vectors))
        rows = [
            {
                "model": model,
                "sha": sha,
                "dims": len(v),
                "vector": base64.b64encode(np.asarray(v, dtype=np.float32).tobytes()).decode(),
            }
            for sha, v in vectors.items()
            if sha not in have
        ]
        if rows:
            with self.side.writing() as conn:
                conn.execute(memory_embeddings.insert(), rows)

    def put_program(self, body: str, program_id: str, profile: str, *, adopt: bool = False) -> None:
        """Keep a compiled program; ``adopt`` makes it the one the lookup finds for its profile."""
        t = memory_programs
        with self.side.writing() as conn:
            if conn.execute(select(t.c.program_id).where(t.c.program_id == program_id)).first() is None:
                conn.execute(
                    t.insert(),
                    [{"program_id": program_id, "profile": profile, "body": body, "adopted": False}],
                )
            if adopt:
                conn.execute(
                    update(t).where(t.c.profile == profile).values(adopted=t.c.program_id == program_id)
                )

    def adopted(self, profile: str) -> str | None:
        """The adopted program's JSON for a profile, or None."""
        t = memory_programs
        with self.side.reading() as conn:
            query = select(t.c.body).where(t.c.profile == profile, t.c.adopted.is_(True))
            return conn.execute(query).scalar_one_or_none()


def _store_excerpts(conn: Connection, examples: Sequence[MemoryExample]) -> None:
    """Store the examples' excerpts the blob table does not hold yet (one row per sha)."""
    blobs = set(conn.execute(select(memory_blobs.c.sha)).scalars())
    texts = {e.example.excerpt_sha: e.excerpt for e in examples if e.example.excerpt_sha not in blobs}
    if texts:
        conn.execute(memory_blobs.insert(), [{"sha": s, "text": t} for s, t in texts.items()])


def _from_row(row: Any) -> MemoryExample:
    x: dict[str, Scalar] = dict(row["x"])
    example = Example(
        excerpt_sha=row["excerpt_sha"],
        x=x,
        instruments={k: InstrumentState.model_validate(v) for k, v in row["instruments"].items()},
        y=row["y"],
        group=row["group_key"],
        language=row["language"],
        family=row["family"],
    )
    found = MemoryExample(
        example=example,
        excerpt=row["text"],
        source=row["source"],
        profile=row["profile"],
        unit=row["unit"],
        frameworks=tuple(row["frameworks"]),
        roles=tuple(row["roles"]),
        label_set_digest=row["label_set_digest"],
    )
    return replace(found, id=row["id"]) if found.id != row["id"] else found
