"""Players, tokens, turns with roll evidence, score corrections.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "players",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(40), nullable=False),
        sa.Column("name_key", sa.String(40), nullable=False, unique=True),
        sa.Column("password_hash", sa.String(255), nullable=False),
        sa.Column("timezone", sa.String(64), nullable=False),
        sa.Column("is_admin", sa.Boolean, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "tokens",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column(
            "player_id",
            sa.Integer,
            sa.ForeignKey("players.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "turns",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "player_id", sa.Integer, sa.ForeignKey("players.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("day", sa.Date, nullable=False),
        sa.Column("round", sa.Integer, nullable=False, index=True),
        sa.Column("score", sa.Integer, nullable=False),
        sa.Column("comment", sa.Text, nullable=False),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("idempotency_key", sa.String(64), nullable=False, unique=True),
        sa.Column("submitted_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("local_time", sa.String(32), nullable=False),
        sa.UniqueConstraint("player_id", "day", name="uq_turns_player_day"),
    )
    op.create_table(
        "rolls",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "turn_id",
            sa.Integer,
            sa.ForeignKey("turns.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("values", sa.JSON, nullable=False),
        sa.Column("reading", sa.JSON, nullable=True),
        sa.Column("photo", sa.LargeBinary, nullable=True),
        sa.UniqueConstraint("turn_id", "position", name="uq_rolls_turn_position"),
    )
    op.create_table(
        "corrections",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "turn_id",
            sa.Integer,
            sa.ForeignKey("turns.id", ondelete="CASCADE"),
            nullable=False,
            index=True,
        ),
        sa.Column("admin_id", sa.Integer, sa.ForeignKey("players.id"), nullable=False),
        sa.Column("old_score", sa.Integer, nullable=False),
        sa.Column("new_score", sa.Integer, nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    for table in ("corrections", "rolls", "turns", "tokens", "players"):
        op.drop_table(table)
