"""ledger projection tables

Revision ID: 0002 Revises: 0001 Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ouro_closed_tickets",
        sa.Column("ticket", sa.Integer(), nullable=False),
        sa.Column("pull_request", sa.Integer(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("ticket"),
    )
    op.create_table(
        "ouro_decisions",
        sa.Column("repo", sa.String(length=200), nullable=False),
        sa.Column("pin", sa.String(length=64), nullable=False),
        sa.Column("path", sa.String(length=1000), nullable=False),
        sa.Column("function", sa.String(length=300), nullable=False),
        sa.Column("family", sa.String(length=100), nullable=False),
        sa.Column("action", sa.String(length=20), nullable=False),
        sa.Column("p", sa.Float(), nullable=True),
        sa.Column("rationale", sa.Text(), nullable=False),
        sa.Column("program_id", sa.String(length=64), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=True),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.Column("cached", sa.Boolean(), nullable=False),
        sa.Column("undecided", sa.String(length=40), nullable=True),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("repo", "pin", "path", "function", "family"),
    )
    op.create_table(
        "ouro_faults",
        sa.Column("position", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("task", sa.String(length=100), nullable=False),
        sa.Column("message_id", sa.String(length=128), nullable=True),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("position"),
    )
    op.create_table(
        "ouro_findings",
        sa.Column("miner", sa.String(length=100), nullable=False),
        sa.Column("rule", sa.String(length=100), nullable=False),
        sa.Column("subject", sa.String(length=500), nullable=False),
        sa.Column("run", sa.String(length=200), nullable=False),
        sa.Column("severity", sa.String(length=20), nullable=False),
        sa.Column("scope", sa.String(length=20), nullable=False),
        sa.Column("tenant", sa.String(length=64), nullable=False),
        sa.Column("proof", sa.JSON(), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("miner", "rule", "subject", "run"),
    )
    op.create_table(
        "ouro_fixer_sessions",
        sa.Column("ticket", sa.Integer(), nullable=False),
        sa.Column("started", sa.String(length=40), nullable=False),
        sa.Column("ended", sa.String(length=40), nullable=False),
        sa.Column("branch", sa.String(length=300), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=False),
        sa.Column("outcome", sa.String(length=30), nullable=False),
        sa.Column("pull_request", sa.Integer(), nullable=True),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("ticket", "started"),
    )
    op.create_table(
        "ouro_label_requests",
        sa.Column("position", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("ticket", sa.Integer(), nullable=False),
        sa.Column("proposal", sa.BigInteger(), nullable=True),
        sa.Column("miner", sa.String(length=100), nullable=True),
        sa.Column("corpus", sa.JSON(), nullable=False),
        sa.Column("instances", sa.JSON(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("at", sa.String(length=40), nullable=False),
        sa.PrimaryKeyConstraint("position"),
    )
    with op.batch_alter_table("ouro_label_requests", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_ouro_label_requests_ticket"), ["ticket"], unique=False)

    op.create_table(
        "ouro_labeler_runs",
        sa.Column("started", sa.String(length=40), nullable=False),
        sa.Column("ended", sa.String(length=40), nullable=True),
        sa.Column("record", sa.JSON(), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("started"),
    )
    op.create_table(
        "ouro_labels",
        sa.Column("position", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("ticket", sa.Integer(), nullable=False),
        sa.Column("instance", sa.String(length=200), nullable=False),
        sa.Column("positive", sa.Boolean(), nullable=False),
        sa.Column("quote", sa.Text(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("file", sa.String(length=1000), nullable=False),
        sa.Column("line", sa.Integer(), nullable=False),
        sa.Column("acceptance", sa.String(length=30), nullable=False),
        sa.Column("why", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("position"),
    )
    with op.batch_alter_table("ouro_labels", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_ouro_labels_ticket"), ["ticket"], unique=False)

    op.create_table(
        "ouro_merges",
        sa.Column("pull_request", sa.Integer(), nullable=False),
        sa.Column("head_sha", sa.String(length=64), nullable=False),
        sa.Column("outcome", sa.String(length=20), nullable=False),
        sa.Column("refusal", sa.JSON(), nullable=False),
        sa.Column("at", sa.String(length=40), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("pull_request", "head_sha"),
    )
    op.create_table(
        "ouro_precheck_verdicts",
        sa.Column("position", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("ticket", sa.Integer(), nullable=False),
        sa.Column("proposal", sa.BigInteger(), nullable=True),
        sa.Column("miner", sa.String(length=100), nullable=True),
        sa.Column("verdict", sa.String(length=20), nullable=False),
        sa.Column("instances_named", sa.JSON(), nullable=False),
        sa.Column("instances_found", sa.JSON(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("position"),
    )
    with op.batch_alter_table("ouro_precheck_verdicts", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_ouro_precheck_verdicts_ticket"), ["ticket"], unique=False)

    op.create_table(
        "ouro_proposals",
        sa.Column("ticket", sa.Integer(), nullable=False),
        sa.Column("comment_id", sa.BigInteger(), nullable=False),
        sa.Column("miner", sa.String(length=100), nullable=False),
        sa.Column("corpus", sa.JSON(), nullable=False),
        sa.Column("instances", sa.JSON(), nullable=False),
        sa.Column("predicate", sa.Text(), nullable=False),
        sa.Column("posted_at", sa.String(length=40), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("ticket", "comment_id"),
    )
    op.create_table(
        "ouro_runs",
        sa.Column("run", sa.String(length=200), nullable=False),
        sa.Column("path", sa.String(length=1000), nullable=False),
        sa.Column("digest", sa.String(length=64), nullable=False),
        sa.Column("lines", sa.Integer(), nullable=False),
        sa.Column("malformed", sa.Integer(), nullable=False),
        sa.Column("tool_calls", sa.Integer(), nullable=False),
        sa.Column("tool_errors", sa.Integer(), nullable=False),
        sa.Column("input_tokens", sa.BigInteger(), nullable=False),
        sa.Column("output_tokens", sa.BigInteger(), nullable=False),
        sa.Column("cache_creation_input_tokens", sa.BigInteger(), nullable=False),
        sa.Column("cache_read_input_tokens", sa.BigInteger(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=True),
        sa.Column("started_at", sa.String(length=40), nullable=True),
        sa.Column("ended_at", sa.String(length=40), nullable=True),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("run"),
    )
    op.create_table(
        "ouro_series_points",
        sa.Column("series", sa.String(length=200), nullable=False),
        sa.Column("at", sa.String(length=40), nullable=False),
        sa.Column("labels", sa.String(length=500), nullable=False),
        sa.Column("value", sa.Float(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("low", sa.Float(), nullable=True),
        sa.Column("high", sa.Float(), nullable=True),
        sa.Column("position", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("series", "at", "labels"),
    )


def downgrade() -> None:
    op.drop_table("ouro_series_points")
    op.drop_table("ouro_runs")
    op.drop_table("ouro_proposals")
    with op.batch_alter_table("ouro_precheck_verdicts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_ouro_precheck_verdicts_ticket"))

    op.drop_table("ouro_precheck_verdicts")
    op.drop_table("ouro_merges")
    with op.batch_alter_table("ouro_labels", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_ouro_labels_ticket"))

    op.drop_table("ouro_labels")
    op.drop_table("ouro_labeler_runs")
    with op.batch_alter_table("ouro_label_requests", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_ouro_label_requests_ticket"))

    op.drop_table("ouro_label_requests")
    op.drop_table("ouro_fixer_sessions")
    op.drop_table("ouro_findings")
    op.drop_table("ouro_faults")
    op.drop_table("ouro_decisions")
    op.drop_table("ouro_closed_tickets")
