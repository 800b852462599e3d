"""The cron triggers' skip-while-running locks.

Revision ID: 0004 Revises: 0003 Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ouro_trigger_locks",
        sa.Column("name", sa.String(50), primary_key=True),
        sa.Column("task", sa.String(100), nullable=False),
        sa.Column("message_id", sa.String(128), nullable=True),
        sa.Column("expires_at", sa.BigInteger, nullable=False),
        sa.Column("fired_at", sa.BigInteger, nullable=True),
        sa.Column("runs", sa.Integer, nullable=False),
        sa.Column("skips", sa.Integer, nullable=False),
        sa.Column("not_built", sa.Integer, nullable=False),
        sa.Column("last_outcome", sa.String(100), nullable=True),
        sa.Column("last_at", sa.BigInteger, nullable=True),
    )


def downgrade() -> None:
    op.drop_table("ouro_trigger_locks")
