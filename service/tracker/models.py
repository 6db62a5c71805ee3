"""Database tables of the Morning Roll tracker (SQLAlchemy 2.0 declarative)."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import (
    JSON,
    Boolean,
    Date,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, column_property, mapped_column, relationship

__all__ = ["Base", "Correction", "Player", "Roll", "Token", "Turn"]


class Base(DeclarativeBase):
    pass


class Player(Base):
    __tablename__ = "players"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(40))
    name_key: Mapped[str] = mapped_column(String(40), unique=True)
    """Lower-cased name: names are unique regardless of case."""
    password_hash: Mapped[str] = mapped_column(String(255))
    timezone: Mapped[str] = mapped_column(String(64))
    """The zone whose days the player's turns count for, until ``timezone_from``."""
    next_timezone: Mapped[str | None] = mapped_column(String(64), nullable=True)
    """The zone the player asked to change to, in force from ``timezone_from`` on."""
    timezone_from: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    is_admin: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    turns: Mapped[list[Turn]] = relationship(back_populates="player")


class Token(Base):
    __tablename__ = "tokens"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    """SHA-256 of the bearer token: the token itself is never stored."""
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    """From then on the token is refused (``DICECAM_TRACKER_TOKEN_DAYS`` after ``created_at``)."""

    player: Mapped[Player] = relationship()


class Turn(Base):
    __tablename__ = "turns"
    __table_args__ = (
        UniqueConstraint("player_id", "day", name="uq_turns_player_day"),
        Index("ix_turns_round_player", "round", "player_id", "day", "score"),
    )
    """A player's turns by day (today's turn, their history); a round's standings and each
    player's latest turn of it read ``ix_turns_round_player`` alone (it covers them)."""

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id", ondelete="CASCADE"))
    day: Mapped[date] = mapped_column(Date)
    """The player's local calendar day when the server received the turn."""
    round: Mapped[int] = mapped_column(Integer)
    """The round is the calendar year of ``day``."""
    score: Mapped[int] = mapped_column(Integer)
    comment: Mapped[str] = mapped_column(Text, default="")
    game: Mapped[str] = mapped_column(String(32), default="morning-roll")
    idempotency_key: Mapped[str] = mapped_column(String(64), unique=True)
    submitted_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    local_time: Mapped[str] = mapped_column(String(32))
    """ISO local time of submission in the player's zone, as the server saw it."""

    player: Mapped[Player] = relationship(back_populates="turns")
    rolls: Mapped[list[Roll]] = relationship(
        back_populates="turn", order_by="Roll.position", cascade="all, delete-orphan"
    )
    corrections: Mapped[list[Correction]] = relationship(
        back_populates="turn", order_by="Correction.id", cascade="all, delete-orphan"
    )


class Roll(Base):
    """Evidence of one roll of a camera-submitted turn: the values, the reading, the photo."""

    __tablename__ = "rolls"
    __table_args__ = (UniqueConstraint("turn_id", "position", name="uq_rolls_turn_position"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    turn_id: Mapped[int] = mapped_column(ForeignKey("turns.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    values: Mapped[list[int]] = mapped_column(JSON)
    reading: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    photo: Mapped[bytes | None] = mapped_column(LargeBinary, nullable=True, deferred=True)
    """Loaded only when read (the photo route): a year of turns lists thousands of rolls."""
    has_photo: Mapped[bool] = column_property(photo.is_not(None))

    turn: Mapped[Turn] = relationship(back_populates="rolls")


class Correction(Base):
    """Audit record of an administrator's score correction."""

    __tablename__ = "corrections"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    turn_id: Mapped[int] = mapped_column(ForeignKey("turns.id", ondelete="CASCADE"), index=True)
    admin_id: Mapped[int] = mapped_column(ForeignKey("players.id"))
    old_score: Mapped[int] = mapped_column(Integer)
    new_score: Mapped[int] = mapped_column(Integer)
    reason: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    turn: Mapped[Turn] = relationship(back_populates="corrections")
    admin: Mapped[Player] = relationship()
