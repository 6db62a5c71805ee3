"""The Solitaire Dice sheets and Low-High turns the service holds: by id, a day at most, saved
after every move when there is a database (:mod:`service.sheet_db`), reloaded at start."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from service.sheets import RollGame, new_session
from service.turns import TurnError

__all__ = ["SheetStore", "open_sheet_store"]

log = logging.getLogger("dicecam.service")


class SheetStore:
    """Sheets and turns by id: at most ``max_games`` (finished ones go first), none older than
    ``max_age_s`` (a day, as turns). With a ``database``
    (:class:`service.sheet_db.SheetDatabase`) every move is saved and those of the last day are
    reloaded at start."""

    def __init__(self, database: Any = None, max_games: int = 500) -> None:
        self._games: dict[str, RollGame] = {}
        self._lock = threading.Lock()
        self.max_games = max_games
        self.max_age_s = 24 * 3600.0
        self.database = database
        if database is not None:
            stale = time.time() - self.max_age_s
            database.delete(before=stale)
            for game in database.load(self._restore, since=stale):
                self._games[game.id] = game

    @staticmethod
    def _restore(row: Any) -> RollGame:
        """A saved sheet or turn (a :class:`service.sheet_db.SheetRow`) played again."""
        game = new_session(row.game, row.player, row.rules)
        game.id, game.created = row.id, row.created
        game.replay(row.moves)
        if len(row.rolls) != len(game.rolls):
            raise ValueError(f"expected {len(game.rolls)} saved rolls, got {len(row.rolls)}")
        for record, saved in zip(game.rolls, row.rolls, strict=True):
            record.reading = saved.get("reading")
            record.source = saved.get("source", record.source)
        return game

    def start(self, game: str, player: str, rules: dict[str, Any] | None = None) -> RollGame:
        """A new sheet or turn of ``game`` (TurnError 422 for a bad house rule), saved."""
        session = new_session(game, player, rules)
        dropped: list[str] = []
        with self._lock:
            stale = time.time() - self.max_age_s
            dropped += [k for k, g in self._games.items() if g.created < stale]
            for old in dropped:
                del self._games[old]
            if len(self._games) >= self.max_games:
                victim = min(self._games.values(), key=lambda g: (not g.over, g.created))
                del self._games[victim.id]
                dropped.append(victim.id)
            self._games[session.id] = session
        if self.database is not None and dropped:
            self.database.delete(dropped)
        self.save(session)
        return session

    def get(self, game_id: str, game: str) -> RollGame:
        """The sheet or turn ``game_id`` of ``game``; TurnError 404 when there is none."""
        with self._lock:
            session = self._games.get(game_id)
        if (
            session is None
            or session.game != game
            or session.created < time.time() - self.max_age_s
        ):
            kept = "a day" if self.database is not None else "in memory until restart"
            what = "sheet" if game == "solitaire-dice" else f"{game} turn"
            raise TurnError(f"no {what} with id {game_id!r} ({what}s are kept {kept})", 404)
        return session

    def save(self, session: RollGame) -> None:
        """Write ``session`` to the database (nothing without one). When that fails it goes
        back to its last saved state and TurnError says so: 409 when another process moved it
        meanwhile, else 503."""
        if self.database is None:
            return
        from service.turn_db import TurnConflict

        try:
            self.database.save(session)
        except Exception as exc:
            conflict = isinstance(exc, TurnConflict)
            if conflict:
                log.warning("%s", exc)
            else:
                log.exception("%s %s could not be saved", session.game, session.id)
            restored = [
                g
                for g in self.database.load(self._restore, since=session.created)
                if g.id == session.id
            ]
            with self._lock:
                if restored:
                    self._games[session.id] = restored[0]
                else:
                    self._games.pop(session.id, None)
            if conflict:
                raise TurnError(
                    f"{exc}: this move was not made; GET it again to see it as the file holds "
                    "it, and run one dicecam serve per data folder",
                    409,
                ) from None
            raise TurnError(
                f"the {session.game} {session.noun} could not be saved "
                f"({type(exc).__name__}: {exc}); its last move was undone, try again",
                503,
            ) from None

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
