"""The Solitaire Dice sheets and Low-High turns the service holds: by id, a day at most, saved
after every move when there is a database (:mod:`service.sheet_db`) and read back from it."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from service.session_store import SessionStore
from service.sheets import RollGame, new_session
from service.turns import TurnError

__all__ = ["SheetStore", "open_sheet_store"]

log = logging.getLogger("dicecam.service")


class SheetStore(SessionStore[RollGame]):
    """Sheets and turns by id: at most ``max_games`` in memory (the least recently used let go
    of first: see :class:`SessionStore`), none older than a day, as turns. With a ``database``
    (:class:`service.sheet_db.SheetDatabase`) every move is saved and a game memory let go of
    is read back from it."""

    def __init__(
        self,
        database: Any = None,
        max_games: int = 500,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__(database, max_games, clock)

    def _noun(self, session: RollGame) -> str:
        return f"{session.game} {session.noun}"

    def _restore(self, row: Any, *saved: Any) -> RollGame:
        """A saved sheet or turn (a :class:`service.sheet_db.SheetRow`) played again."""
        game = new_session(row.game, row.player, row.rules)
        game.id, game.created = row.id, row.created
        game.replay(row.moves)
        if len(row.rolls) != len(game.rolls):
            raise ValueError(f"expected {len(game.rolls)} saved rolls, got {len(row.rolls)}")
        for record, stored in zip(game.rolls, row.rolls, strict=True):
            record.reading = stored.get("reading")
            record.source = stored.get("source", record.source)
        return game

    def start(self, game: str, player: str, rules: dict[str, Any] | None = None) -> RollGame:
        """A new sheet or turn of ``game`` (TurnError 422 for a bad house rule), saved."""
        session = new_session(game, player, rules)
        session.created = self.clock()
        self._admit(session)
        return session

    def get(self, game_id: str, game: str) -> RollGame:
        """The sheet or turn ``game_id`` of ``game``; TurnError 404 when there is none."""
        session = self._find(game_id)
        if (
            session is None
            or session.game != game
            or session.created < self.clock() - self.max_age_s
        ):
            kept = "a day" if self.database is not None else "in memory until restart"
            what = "sheet" if game == "solitaire-dice" else f"{game} turn"
            raise TurnError(f"no {what} with id {game_id!r} ({what}s are kept {kept})", 404)
        return session

    def close(self) -> None:
        if self.database is not None:
            self.database.dispose()


def open_sheet_store(settings: Any) -> SheetStore:
    """The store of a service with these :class:`service.settings.Settings`: saved in the
    turns' SQLite file, or in memory only (with a warning) when it cannot be opened."""
    from service.sheet_db import SheetDatabase

    path = settings.turns_database_file()
    try:
        database = SheetDatabase(path)
    except Exception as exc:
        log.warning("sheets are kept in memory only: cannot open %s (%s)", path, exc)
        database = None
    return SheetStore(database)
