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
import time
from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING, Any

from sqlalchemy import JSON, Float, Integer, String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from service.game_db import GameDatabase

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


class SheetDatabase(GameDatabase):
    """Saves, loads and deletes sheets and Low-High turns (:class:`service.sheets.RollGame`).

    Args:
        path: the SQLite file (created, with its folder, readable by its owner only).
    """

    row = SheetRow
    version = FORMAT

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
        self._merge(row, f"{game.game} {game.id}")

    def load(
        self,
        restore: Callable[[SheetRow], RollGame],
        since: float,
        ids: Collection[str] | None = None,
    ) -> list[RollGame]:
        """The sheets and turns started at or after ``since`` (epoch seconds; only those of
        ``ids`` when given), least recently saved first, rebuilt by ``restore``; rows it cannot
        use are skipped with a warning."""
        out = []
        for row in self._rows(since, ids):
            try:
                out.append(restore(row))
            except Exception as exc:
                log.warning("%s %s could not be restored and is skipped: %s", row.game, row.id, exc)
        return out

    def delete(self, ids: Iterable[str] = (), *, before: float | None = None) -> None:
        """Delete these rows, and those started before ``before``."""
        self._delete_rows(list(ids), before)
