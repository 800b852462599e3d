"""Drop the index on ouro_events.message_id: nothing reads by it (idempotence lives in
ouro_handled_messages), and every append paid for it.

Revision ID: 0003 Revises: 0002 Create Date: 2026-11-30
"""

from __future__ import annotations

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_index("ix_ouro_events_message_id", table_name="ouro_events")


def downgrade() -> None:
    op.create_index("ix_ouro_events_message_id", "ouro_events", ["message_id"])
