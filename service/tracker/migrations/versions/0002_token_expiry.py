"""Tokens expire: ``tokens.expires_at``.

A token made before this migration expires a year after it was made (the default of
``DICECAM_TRACKER_TOKEN_DAYS``; the migration does not read settings).

Revision ID: 0002
Revises: 0001
"""

from datetime import timedelta

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

EXISTING_TOKEN_DAYS = 365
"""The lifetime given to the tokens already stored."""


def upgrade() -> None:
    op.add_column("tokens", sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True))
    tokens = sa.table(
        "tokens",
        sa.column("id", sa.Integer),
        sa.column("created_at", sa.DateTime(timezone=True)),
        sa.column("expires_at", sa.DateTime(timezone=True)),
    )
    conn = op.get_bind()
    lifetime = timedelta(days=EXISTING_TOKEN_DAYS)
    for token_id, created_at in conn.execute(sa.select(tokens.c.id, tokens.c.created_at)).all():
        conn.execute(
            tokens.update().where(tokens.c.id == token_id).values(expires_at=created_at + lifetime)
        )
    with op.batch_alter_table("tokens") as batch:
        batch.alter_column("expires_at", existing_type=sa.DateTime(timezone=True), nullable=False)


def downgrade() -> None:
    with op.batch_alter_table("tokens") as batch:
        batch.drop_column("expires_at")
