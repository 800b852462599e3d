"""SQLite: the handled-message table keyed by its primary key alone (WITHOUT ROWID).

Revision ID: 0011 Revises: 0010 Create Date: 2026-11-30
"""

from __future__ import annotations

from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

_COLUMNS = "consumer, message_id, first_position, last_position, handled_at"


def _recreate(rowid: bool) -> None:
    if op.get_bind().dialect.name != "sqlite":
        return  # PostgreSQL has no rowid: nothing to change
    op.execute(
        "CREATE TABLE ouro_handled_messages_new ("
        " consumer VARCHAR(100) NOT NULL, message_id VARCHAR(128) NOT NULL,"
        " first_position BIGINT, last_position BIGINT, handled_at DATETIME NOT NULL,"
        " PRIMARY KEY (consumer, message_id))" + ("" if rowid else " WITHOUT ROWID")
    )
    op.execute(
        f"INSERT INTO ouro_handled_messages_new ({_COLUMNS}) SELECT {_COLUMNS} FROM ouro_handled_messages"
    )
    op.execute("DROP TABLE ouro_handled_messages")
    op.execute("ALTER TABLE ouro_handled_messages_new RENAME TO ouro_handled_messages")


def upgrade() -> None:
    _recreate(rowid=False)


def downgrade() -> None:
    _recreate(rowid=True)
