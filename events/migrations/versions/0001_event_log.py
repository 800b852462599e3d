"""The event log: events, handled messages, projection checkpoints, the outbox.

Revision ID: 0001 Revises: Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ouro_events",
        sa.Column(
            "position",
            sa.BigInteger().with_variant(sa.Integer, "sqlite"),
            primary_key=True,
            autoincrement=False,
        ),
        sa.Column("stream", sa.String(200), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("type", sa.String(100), nullable=False),
        sa.Column("schema_version", sa.Integer, nullable=False),
        sa.Column("payload", sa.JSON, nullable=False),
        sa.Column("meta", sa.JSON, nullable=False),
        sa.Column("message_id", sa.String(128), nullable=True),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("stream", "version", name="uq_ouro_events_stream_version"),
    )
    op.create_index("ix_ouro_events_message_id", "ouro_events", ["message_id"])
    op.create_index("ix_ouro_events_type_position", "ouro_events", ["type", "position"])
    op.create_table(
        "ouro_handled_messages",
        sa.Column("consumer", sa.String(100), primary_key=True),
        sa.Column("message_id", sa.String(128), primary_key=True),
        sa.Column("first_position", sa.BigInteger, nullable=True),
        sa.Column("last_position", sa.BigInteger, nullable=True),
        sa.Column("handled_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "ouro_checkpoints",
        sa.Column("projection", sa.String(100), primary_key=True),
        sa.Column("position", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "ouro_outbox",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("message_id", sa.String(128), nullable=False, unique=True),
        sa.Column("message_type", sa.String(100), nullable=False),
        sa.Column("task", sa.String(100), nullable=False),
        sa.Column("payload", sa.JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("published_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("last_error", sa.String(500), nullable=True),
    )
    op.create_index("ix_ouro_outbox_published_at", "ouro_outbox", ["published_at"])


def downgrade() -> None:
    op.drop_table("ouro_outbox")
    op.drop_table("ouro_checkpoints")
    op.drop_table("ouro_handled_messages")
    op.drop_index("ix_ouro_events_type_position", "ouro_events")
    op.drop_index("ix_ouro_events_message_id", "ouro_events")
    op.drop_table("ouro_events")
