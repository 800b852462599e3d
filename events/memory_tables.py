"""The decider's local memory: labelled example rows, content-addressed excerpt blobs, cached embeddings
and compiled programs (one adopted per profile).

User-local examples (``origin: user``) never reach these tables: they live in the user's repository.
"""

from __future__ import annotations

from sqlalchemy import JSON, Boolean, Column, Integer, String, Table, Text

from ouroboros_gates.events.tables import metadata

__all__ = ["memory_blobs", "memory_embeddings", "memory_examples", "memory_programs"]

memory_examples = Table(
    "ouro_memory_examples",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("family", String(100), nullable=False),
    Column("language", String(40), nullable=False),
    Column("profile", String(20), nullable=False),
    Column("y", Integer, nullable=False),
    Column("source", String(100), nullable=False),
    Column("group_key", String(300), nullable=False),
    Column("frameworks", JSON, nullable=False),
    Column("unit", String(10), nullable=False),
    Column("x", JSON, nullable=False),
    Column("instruments", JSON, nullable=False),
    Column("roles", JSON, nullable=False),
    Column("excerpt_sha", String(64), nullable=False),
    Column("label_set_digest", String(64), nullable=False),
)

# Excerpts by the sha256 of their text: an example points at one, several examples may share it.
memory_blobs = Table(
    "ouro_memory_blobs",
    metadata,
    Column("sha", String(64), primary_key=True),
    Column("text", Text, nullable=False),
)

# One vector per (embedding model, sha256 of the normalised excerpt): the store is embedded once per model.
memory_embeddings = Table(
    "ouro_memory_embeddings",
    metadata,
    Column("model", String(200), primary_key=True),
    Column("sha", String(64), primary_key=True),
    Column("dims", Integer, nullable=False),
    Column("vector", Text, nullable=False),
)

memory_programs = Table(
    "ouro_memory_programs",
    metadata,
    Column("program_id", String(64), primary_key=True),
    Column("profile", String(20), nullable=False),
    Column("body", Text, nullable=False),
    Column("adopted", Boolean, nullable=False),
)
