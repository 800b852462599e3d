"""The decider's memory: examples, excerpt blobs, embeddings and programs.

Revision ID: 0008 Revises: 0004 Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ouro_memory_examples",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("family", sa.String(100), nullable=False),
        sa.Column("language", sa.String(40), nullable=False),
        sa.Column("profile", sa.String(20), nullable=False),
        sa.Column("y", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(100), nullable=False),
        sa.Column("group_key", sa.String(300), nullable=False),
        sa.Column("frameworks", sa.JSON(), nullable=False),
        sa.Column("unit", sa.String(10), nullable=False),
        sa.Column("x", sa.JSON(), nullable=False),
        sa.Column("instruments", sa.JSON(), nullable=False),
        sa.Column("roles", sa.JSON(), nullable=False),
        sa.Column("excerpt_sha", sa.String(64), nullable=False),
        sa.Column("label_set_digest", sa.String(64), nullable=False),
    )
    op.create_table(
        "ouro_memory_blobs",
        sa.Column("sha", sa.String(64), primary_key=True),
        sa.Column("text", sa.Text(), nullable=False),
    )
    op.create_table(
        "ouro_memory_embeddings",
        sa.Column("model", sa.String(200), primary_key=True),
        sa.Column("sha", sa.String(64), primary_key=True),
        sa.Column("dims", sa.Integer(), nullable=False),
        sa.Column("vector", sa.Text(), nullable=False),
    )
    op.create_table(
        "ouro_memory_programs",
        sa.Column("program_id", sa.String(64), primary_key=True),
        sa.Column("profile", sa.String(20), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("adopted", sa.Boolean(), nullable=False),
    )


def downgrade() -> None:
    for name in (
        "ouro_memory_programs",
        "ouro_memory_embeddings",
        "ouro_memory_blobs",
        "ouro_memory_examples",
    ):
        op.drop_table(name)
