"""Standings read an index alone: ``ix_turns_round_player`` (round, player, day, score) takes
the place of ``ix_turns_round``.

A round's standings and each player's latest turn of it were read from the turns table row by
row (22,000 rows for 60 players over a year); the new index covers those queries and still
serves every query by round.

Revision ID: 0003
Revises: 0002
"""

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_turns_round_player", "turns", ["round", "player_id", "day", "score"])
    op.drop_index("ix_turns_round", table_name="turns")


def downgrade() -> None:
    op.create_index("ix_turns_round", "turns", ["round"])
    op.drop_index("ix_turns_round_player", table_name="turns")
