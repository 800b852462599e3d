"""The fixers' budget keeps what a session spent past its reservation apart from what the cap was charged.

Revision ID: 0012 Revises: 0011 Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

_TABLES = ("ouro_fixer_budget_days", "ouro_fixer_reservations")


def upgrade() -> None:
    for table in _TABLES:
        op.add_column(table, sa.Column("overrun_usd", sa.Float, nullable=False, server_default=sa.text("0")))


def downgrade() -> None:
    for table in _TABLES:
        with op.batch_alter_table(table) as batch:
            batch.drop_column("overrun_usd")
