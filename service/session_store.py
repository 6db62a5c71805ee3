"""What the service's stores of games in progress share (turns, Solitaire Dice sheets, Low-High
turns): by id, at most ``max_items`` (finished ones go first), none older than a day, saved after
every move when there is a database and reloaded at start; a move that cannot be saved is undone.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from service.turns import TurnError

__all__ = ["SessionStore"]

log = logging.getLogger("dicecam.service")

S = TypeVar("S")


class SessionStore(Generic[S]):
    """Sessions by id. Subclasses say how a saved row is played again (:meth:`_restore`) and
    what a session is called in messages (:meth:`_noun`). With a ``database`` (it has
    ``save``, ``load(restore, since)`` and ``delete(ids or before=)``) every change is saved
    (:meth:`save`) and the sessions of the last ``max_age_s`` are reloaded at start."""

    def __init__(
        self, database: Any = None, max_items: int = 500, clock: Callable[[], float] = time.time
    ) -> None:
        self._items: dict[str, S] = {}
        self._lock = threading.Lock()
        self.max_items = max_items
        self.max_age_s = 24 * 3600.0
        """Sessions are dropped a day after they started (Morning Roll: one turn a day): when
        another starts, at start and at each :meth:`sweep`."""
        self.clock = clock
        """Epoch seconds now (tests set it)."""
        self.database = database
        if database is not None:
            stale = self.clock() - self.max_age_s
            database.delete(before=stale)
            for session in database.load(self._restore, since=stale):
                self._items[session.id] = session

    def _restore(self, row: Any, *saved: Any) -> S:
        """A saved session played again from its row (and what else the database keeps)."""
        raise NotImplementedError

    def _noun(self, session: S) -> str:
        """What ``session`` is called in messages (``turn``, ``solitaire-dice sheet``)."""
        return "turn"

    def open_of(self, player: str) -> list[S]:
        """The sessions of ``player`` (the name as the games were started with it, ignoring case
        and outer spaces) that are not over and not a day old, newest first."""
        name = player.strip().casefold()
        stale = self.clock() - self.max_age_s
        with self._lock:
            found = [
                s
                for s in self._items.values()
                if s.player.strip().casefold() == name and not s.over and s.created >= stale
            ]
        return sorted(found, key=lambda s: s.created, reverse=True)

    def _admit(self, session: S) -> None:
        """Hold ``session`` (dropping day-old ones, and the oldest, finished first, when full)
        and save it."""
        with self._lock:
            dropped = self._drop_stale()
            if len(self._items) >= self.max_items:
                victim = min(self._items.values(), key=lambda s: (not s.over, s.created))
                del self._items[victim.id]
                dropped.append(victim.id)
            self._items[session.id] = session
        if self.database is not None and dropped:
            self.database.delete(dropped)
        self.save(session)

    def _drop_stale(self) -> list[str]:
        """Let go of the sessions started over :attr:`max_age_s` ago (the lock held); their
        ids, for the database."""
        stale = self.clock() - self.max_age_s
        dropped = [k for k, s in self._items.items() if s.created < stale]
        for old in dropped:
            del self._items[old]
        return dropped

    def sweep(self) -> int:
        """Drop the sessions started over :attr:`max_age_s` ago, from memory and the database
        (with their photos), so that an idle server holds no day-old game; run periodically.
        Returns how many were dropped."""
        with self._lock:
            dropped = self._drop_stale()
        if self.database is not None and dropped:
            self.database.delete(dropped)
        if dropped:
            log.info(
                "dropped %d sessions started over %g h ago", len(dropped), self.max_age_s / 3600
            )
        return len(dropped)

    def save(self, session: S) -> None:
        """Write ``session`` to the database (nothing without one). When that fails it goes
        back to its last saved state and TurnError says so: 409 when another process moved it
        meanwhile (:class:`service.turn_db.TurnConflict`), else 503."""
        if self.database is None:
            return
        from service.turn_db import TurnConflict

        noun = self._noun(session)
        try:
            self.database.save(session)
        except Exception as exc:
            conflict = isinstance(exc, TurnConflict)
            if conflict:
                log.warning("%s", exc)
            else:
                log.exception("%s %s could not be saved", noun, session.id)
            restored = [
                s
                for s in self.database.load(
                    lambda row, *saved: (
                        self._restore(row, *saved) if row.id == session.id else None
                    ),
                    since=session.created,
                )
                if s is not None
            ]
            with self._lock:
                if restored:
                    self._items[session.id] = restored[0]
                else:
                    self._items.pop(session.id, None)
            if conflict:
                raise TurnError(
                    f"{exc}: this move was not made; the {noun} is as the file holds it now "
                    "(GET it again), and one dicecam serve per data folder avoids this",
                    409,
                ) from None
            raise TurnError(
                f"the {noun} could not be saved ({type(exc).__name__}: {exc}); "
                "its last move was undone, try again",
                503,
            ) from None
