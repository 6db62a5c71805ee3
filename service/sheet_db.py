"""Solitaire Dice sheets and Low-High turns on disk, so that a restart loses none of them.

One row per sheet or turn in the table ``roll_games`` of the turns' SQLite file
(``<data dir>/turns.sqlite3``, :mod:`service.turn_db`), rewritten in one transaction after
every move: the player, the game, the house rules, the moves as played (replayed through the
rules on load) and each roll's values, source and reading. No photos are kept: these games
are not sent to the tracker.

Example (not run: needs a played sheet and its restore callback):
    >>> db = SheetDatabase(tmp / "turns.sqlite3")  # doctest: +SKIP
    >>> db.save(sheet); db.load(restore, since=0)  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import JSON, Float, Integer, String, delete, select
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, sessionmaker

from service.turn_db import (
    TurnConflict,
    move_names,
    played_before,
    player_ids,
    private_file,
    recent_ids,
)

if TYPE_CHECKING:
    from service.sheets import RollGame

__all__ = ["FORMAT", "SheetDatabase", "SheetRow"]

log = logging.getLogger("dicecam.service")

FORMAT = 1
"""Version of a row's layout (``moves``, ``rolls``): rows of other versions are not loaded."""


class Base(DeclarativeBase):
    pass


class SheetRow(Base):
    __tablename__ = "roll_games"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    format: Mapped[int] = mapped_column(Integer, default=FORMAT)
    game: Mapped[str] = mapped_column(String(40))
    player: Mapped[str] = mapped_column(String(80))
    rules: Mapped[dict[str, Any]] = mapped_column(JSON)
    created: Mapped[float] = mapped_column(Float, index=True)
    updated: Mapped[float] = mapped_column(Float)
    moves: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    rolls: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    """Each roll's values, source and reading."""


class SheetDatabase:
    """Saves, loads and deletes sheets and Low-High turns (:class:`service.sheets.RollGame`).

    Args:
        path: the SQLite file (created, with its folder, readable by its owner only).
    """

    def __init__(self, path: str | Path) -> None:
        from service.tracker.db import make_engine

        self.path = Path(path).expanduser()
        private_file(self.path)
        self.engine = make_engine(f"sqlite:///{self.path}")
        Base.metadata.create_all(self.engine)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._lock = threading.Lock()  # one writer at a time in this process

    def save(self, game: RollGame) -> None:
        """Write the whole sheet or turn in one transaction.

        Raises:
            TurnConflict: the file holds moves this copy lacks (nothing written).
        """
        row = SheetRow(
            id=game.id,
            format=FORMAT,
            game=game.game,
            player=game.player,
            rules=dict(game.rules),
            created=game.created,
            updated=time.time(),
            moves=list(game.moves),
            rolls=[r.to_dict() for r in game.rolls],
        )
        with self._lock, self._sessions() as db, db.begin():  # BEGIN IMMEDIATE: one writer
            stored = db.get(SheetRow, game.id)
            if stored is not None and not played_before(stored.moves, game.moves):
                raise TurnConflict(
                    f"{game.game} {game.id} was moved by another dicecam on the same data "
                    f"folder (the file holds {len(stored.moves)} moves, {move_names(stored.moves)}; "
                    f"this copy played {move_names(game.moves)})"
                )
            db.merge(row)

    def load(
        self,
        restore: Callable[[SheetRow], RollGame],
        since: float,
        ids: Collection[str] | None = None,
    ) -> list[RollGame]:
        """The sheets and turns started at or after ``since`` (epoch seconds; only those of
        ``ids`` when given), least recently saved first, rebuilt by ``restore``; rows it cannot
        use are skipped with a warning."""
        query = select(SheetRow).where(SheetRow.created >= since, SheetRow.format == FORMAT)
        if ids is not None:
            query = query.where(SheetRow.id.in_(list(ids)))
        with self._sessions() as db:
            rows = list(db.scalars(query.order_by(SheetRow.updated)))
        out = []
        for row in rows:
            try:
                out.append(restore(row))
            except Exception as exc:
                log.warning("%s %s could not be restored and is skipped: %s", row.game, row.id, exc)
        return out

    def players(self, since: float) -> list[tuple[str, str]]:
        """Each row started at or after ``since``: its id and player."""
        return player_ids(self._sessions, SheetRow, since)

    def recent(self, since: float, limit: int) -> list[str]:
        """The ids of the ``limit`` rows started at or after ``since`` saved last, last first."""
        return recent_ids(self._sessions, SheetRow, FORMAT, since, limit)

    def delete(self, ids: Iterable[str] = (), *, before: float | None = None) -> None:
        """Delete these rows, and those started before ``before``."""
        ids = list(ids)
        with self._lock, self._sessions() as db, db.begin():
            if ids:
                db.execute(delete(SheetRow).where(SheetRow.id.in_(ids)))
            if before is not None:
                db.execute(delete(SheetRow).where(SheetRow.created < before))

    def dispose(self) -> None:
        self.engine.dispose()
