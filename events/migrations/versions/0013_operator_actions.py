"""The operator's actions as ledger tables (retries, dismissals, label reviews, backtest replays), and the
taint flows beside each decision.

Revision ID: 0013 Revises: 0012 Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ouro_dead_letter_retries",
        sa.Column("message_id", sa.String(128), primary_key=True),
        sa.Column("task", sa.String(100), nullable=False),
        sa.Column("retry_message_id", sa.String(128), nullable=False),
        sa.Column("attempt", sa.Integer, nullable=False),
        sa.Column("at", sa.String(40), nullable=False),
        sa.Column("note", sa.Text, nullable=False),
        sa.Column("position", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "ouro_dismissals",
        sa.Column("repo", sa.String(200), primary_key=True),
        sa.Column("pin", sa.String(64), primary_key=True),
        sa.Column("path", sa.String(1000), primary_key=True),
        sa.Column("function", sa.String(300), primary_key=True),
        sa.Column("family", sa.String(100), primary_key=True),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("at", sa.String(40), nullable=False),
        sa.Column("note", sa.Text, nullable=False),
        sa.Column("position", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "ouro_label_reviews",
        sa.Column("label", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("ticket", sa.Integer, nullable=False),
        sa.Column("instance", sa.String(200), nullable=False),
        sa.Column("review", sa.String(20), nullable=False),
        sa.Column("at", sa.String(40), nullable=False),
        sa.Column("note", sa.Text, nullable=False),
        sa.Column("position", sa.BigInteger, nullable=False),
    )
    op.create_table(
        "ouro_backtest_replays",
        sa.Column("position", sa.BigInteger, primary_key=True, autoincrement=False),
        sa.Column("miner", sa.String(100), nullable=False),
        sa.Column("as_of", sa.String(40), nullable=False),
        sa.Column("labels", sa.Integer, nullable=False),
        sa.Column("runs", sa.Integer, nullable=False),
        sa.Column("kappa_star", sa.Float, nullable=True),
        sa.Column("tp", sa.Integer, nullable=True),
        sa.Column("fp", sa.Integer, nullable=True),
        sa.Column("fn", sa.Integer, nullable=True),
        sa.Column("pbo_status", sa.String(200), nullable=True),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("backtest", sa.JSON, nullable=True),
        sa.Column("at", sa.String(40), nullable=False),
    )
    op.add_column("ouro_decisions", sa.Column("flows", sa.JSON, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("ouro_decisions") as batch:  # SQLite drops a column by copying the table
        batch.drop_column("flows")
    for table in (
        "ouro_backtest_replays",
        "ouro_label_reviews",
        "ouro_dismissals",
        "ouro_dead_letter_retries",
    ):
        op.drop_table(table)
