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
    with op.batch_alter_table("players") as batch:
        batch.drop_column("timezone_from")
        batch.drop_column("next_timezone")
