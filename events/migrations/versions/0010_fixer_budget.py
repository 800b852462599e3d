"""The fixers' daily budget: one row per budget day, one reservation per ticket.

Revision ID: 0010 Revises: 0008 Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ouro_fixer_budget_days",
        sa.Column("day", sa.String(10), primary_key=True),
        sa.Column("reserved_usd", sa.Float, nullable=False),
        sa.Column("spent_usd", sa.Float, nullable=False),
    )
    op.create_table(
        "ouro_fixer_reservations",
        sa.Column("ticket", sa.Integer, primary_key=True),
        sa.Column("day", sa.String(10), nullable=False),
        sa.Column("amount_usd", sa.Float, nullable=False),
        sa.Column("spent_usd", sa.Float, nullable=True),
        sa.Column("reserved_at", sa.String(40), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("ouro_fixer_reservations")
    op.drop_table("ouro_fixer_budget_days")
