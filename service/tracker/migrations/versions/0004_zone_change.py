"""A player may change their time zone: the zone asked for (``next_timezone``) and when it
takes over (``timezone_from``); until then ``timezone`` counts.

Revision ID: 0004
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("players", sa.Column("next_timezone", sa.String(64), nullable=True))
    op.add_column("players", sa.Column("timezone_from", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    # ALTER TABLE DROP COLUMN (SQLite 3.35+), not a batch: rebuilding ``players`` on SQLite
    # drops the table, and with foreign keys on that deleted every token, turn and correction
    op.drop_column("players", "timezone_from")
    op.drop_column("players", "next_timezone")
