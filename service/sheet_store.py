"""The Solitaire Dice sheets and Low-High turns the service holds: by id, a day at most, saved
after every move when there is a database (:mod:`service.sheet_db`), reloaded at start."""

from __future__ import annotations

import logging
import time
from typing import Any

from service.session_store import SessionStore
from service.sheets import RollGame, new_session
from service.turns import TurnError

__all__ = ["SheetStore", "open_sheet_store"]

log = logging.getLogger("dicecam.service")


class SheetStore(SessionStore[RollGame]):
    """Sheets and turns by id: at most ``max_games`` (finished ones go first), none older than
    a day, as turns. With a ``database`` (:class:`service.sheet_db.SheetDatabase`) every move
    is saved and those of the last day are reloaded at start."""

    def __init__(self, database: Any = None, max_games: int = 500) -> None:
        super().__init__(database, max_games)

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
        self._admit(session)
        return session

    def get(self, game_id: str, game: str) -> RollGame:
        """The sheet or turn ``game_id`` of ``game``; TurnError 404 when there is none."""
        with self._lock:
            session = self._items.get(game_id)
        if (
            session is None
            or session.game != game
            or session.created < time.time() - self.max_age_s
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
