"""What the service's stores of games in progress share (turns, Solitaire Dice sheets, Low-High
turns): by id, at most ``max_items`` in memory (the least recently used let go of first), none
older than a day, saved after every move when there is a database and read back from it; a move
that cannot be saved is undone.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

from service.turns import TurnError

__all__ = ["SessionStore"]

log = logging.getLogger("dicecam.service")

S = TypeVar("S")


def _count(n: int, noun: str) -> str:
    """``n`` of ``noun`` in words: "1 game", "3 games"."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


class SessionStore(Generic[S]):
    """Sessions by id. Subclasses say how a saved row is played again (:meth:`_restore`), what
    a session is called in messages (:meth:`_noun`) and which must stay held
    (:meth:`_pending`). With a ``database`` (it has ``save``, ``load(restore, since, ids=)``,
    ``players(since)``, ``recent(since, limit)`` and ``delete(ids or before=)``) every change is saved (:meth:`save`).

    Memory holds at most ``max_items`` sessions. A new one (or one read back) takes the place of
    the least recently used (started, fetched or moved) that may go:

    * with a database, any but a :meth:`_pending` one: its row stays, and :meth:`_find` reads
      it back when it is asked for again (a player reloading a finished game after hundreds of
      others started still gets it) until it is a day old;
    * without one (memory only), one unused for :attr:`idle_s` (an hour) at least: it is gone.

    When none may go (a flood of new games from one client: a full store of games used in the
    last hour, or of finished turns the tracker's outbox cannot take yet), the new game is
    refused with TurnError 503 and nothing held is dropped (with a database only the latter
    happens: a flood is taken, memory stays bounded, and the file holds the day's games; a game
    read back then is served without being held). Sessions are dropped, with their rows, a day after they started."""

    def __init__(
        self, database: Any = None, max_items: int = 500, clock: Callable[[], float] = time.time
    ) -> None:
        self._items: OrderedDict[str, S] = OrderedDict()
        """The sessions held, least recently used first."""
        self._used: dict[str, float] = {}
        """When each held session was last used (:attr:`clock`)."""
        self._alive: weakref.WeakValueDictionary[str, S] = weakref.WeakValueDictionary()
        """Every session in memory, held or still used by a request after memory let go of
        it: the one copy :meth:`_find` gives."""
        self._lock = threading.Lock()
        self._reading = threading.Lock()
        """One read-back from the database at a time (:meth:`_find`)."""
        self.max_items = max_items
        self.max_age_s = 24 * 3600.0
        """Sessions are dropped a day after they started (Morning Roll: one turn a day): when
        another starts, at start and at each :meth:`sweep`."""
        self.idle_s = 3600.0
        """Without a database, a session used this recently is never let go of for another."""
        self.clock = clock
        """Epoch seconds now (tests set it)."""
        self.database = database
        if database is not None:
            stale = self.clock() - self.max_age_s
            database.delete(before=stale)
            with self._lock:
                for session in self._load_recent(stale):
                    self._hold(session)

    def _load_recent(self, since: float) -> list[S]:
        """The sessions memory holds at start: those that must stay held
        (:meth:`_pending_ids`) and the most recently saved of the others, up to
        :attr:`max_items` in all (a flood's day of rows is never read whole)."""
        pending = self._pending_ids(since)
        room = self.max_items - len(pending)
        recent = [i for i in self.database.recent(since, room + len(pending)) if i not in pending]
        ids = {*pending, *recent[: max(room, 0)]}
        return self.database.load(self._restore, since=since, ids=ids) if ids else []

    def _restore(self, row: Any, *saved: Any) -> S:
        """A saved session played again from its row (and what else the database keeps)."""
        raise NotImplementedError

    def _noun(self, session: S) -> str:
        """What ``session`` is called in messages (``turn``, ``solitaire-dice sheet``)."""
        return "turn"

    def _pending(self, session: S) -> bool:
        """Whether ``session`` must stay held whatever the store's size (none here; a finished
        turn the tracker's outbox does not hold yet in :class:`service.turn_store.TurnStore`)."""
        return False

    def _pending_ids(self, since: float) -> set[str]:
        """The ids of the rows started at or after ``since`` whose sessions are
        :meth:`_pending` (none here)."""
        return set()

    def open_of(self, player: str) -> list[S]:
        """The sessions of ``player`` (the name as the games were started with it, ignoring case
        and outer spaces) that are not over and not a day old, newest first; with a database,
        those it holds and memory no longer does too."""
        name = player.strip().casefold()
        stale = self.clock() - self.max_age_s
        with self._lock:
            found = [s for s in self._items.values() if s.player.strip().casefold() == name]
        if self.database is not None:
            held = {s.id for s in found}
            ids = [
                i
                for i, who in self.database.players(since=stale)
                if who.strip().casefold() == name and i not in held
            ]
            if ids:
                found += self.database.load(self._restore, since=stale, ids=ids)
        found = [s for s in found if not s.over and s.created >= stale]
        return sorted(found, key=lambda s: s.created, reverse=True)

    def _find(self, session_id: str) -> S | None:
        """The session ``session_id`` (now the most recently used), read back from the database
        when memory let go of it; None when there is none (or it is a day old).

        One copy of a session at a time: one let go of that a request still uses (a photo being
        read) is that copy again, and read-backs go one at a time, so that none holds a copy
        older than the file once another request has moved and let go of it."""
        with self._lock:
            session = self._in_memory(session_id)
            if session is not None:
                self._use(session)
                return session
        if self.database is None:
            return None
        with self._reading:
            with self._lock:  # read back by the request before this one?
                session = self._in_memory(session_id)
                if session is not None:
                    self._use(session)
                    return session
            stale = self.clock() - self.max_age_s
            saved = self.database.load(self._restore, since=stale, ids=[session_id])
            if not saved:
                return None
            with self._lock:
                session = self._alive[session_id] = saved[0]
                self._use(session)
        return session

    def _in_memory(self, session_id: str) -> S | None:
        """The copy of ``session_id`` in memory (the lock held): held, or with a database one a
        request still uses (without one, a session let go of is gone)."""
        if self.database is None:
            return self._items.get(session_id)
        return self._alive.get(session_id)

    def _current(self, session: S) -> bool:
        """Whether ``session`` is the copy the store gives: not one a failed save swapped the
        file's copy in for, nor one dropped."""
        with self._lock:
            return self._in_memory(session.id) is session

    @contextmanager
    def _moving(self, session: S) -> Iterator[S | None]:
        """Hold the lock of the copy of ``session`` the store gives now, as the move routes do,
        so that no move or save of it comes between a look at it and a write: that copy (the
        file's, when a save of ``session`` failed while this waited), or None when the store
        gives none."""
        while True:
            with session.lock:
                with self._lock:
                    current = self._in_memory(session.id)
                if current is session:
                    yield session
                    return
            if current is None:
                yield None
                return
            session = current

    def _use(self, session: S) -> None:
        """Hold ``session`` as the most recently used, letting go of another when full (the
        lock held); when none may go it is served unheld, one copy while requests use it."""
        if session.id in self._items or self._trim(self.max_items - 1) < self.max_items:
            self._hold(session)

    def _admit(self, session: S) -> None:
        """Hold ``session`` (dropping day-old ones, and letting go of the least recently used
        when full: TurnError 503 when none may go) and save it."""
        with self._lock:
            dropped = self._drop_stale()
            try:
                self._make_room()
            finally:
                if self.database is not None and dropped:
                    self.database.delete(dropped)
            self._hold(session)
        self.save(session)

    def _hold(self, session: S) -> None:
        """Hold ``session`` as the most recently used (the lock held)."""
        self._items[session.id] = self._alive[session.id] = session
        self._items.move_to_end(session.id)
        self._used[session.id] = self.clock()

    def _may_go(self, session: S, now: float) -> bool:
        """Whether memory may let go of ``session`` (see the class)."""
        if self._pending(session):
            return False
        return self.database is not None or now - self._used[session.id] >= self.idle_s

    def _trim(self, room: int) -> int:
        """Let go of the least recently used sessions that may go until at most ``room`` are
        held (the lock held; a database keeps their rows). Returns how many are held."""
        now = self.clock()
        for key, session in list(self._items.items()):
            if len(self._items) <= room:
                break
            if self._may_go(session, now):
                del self._items[key], self._used[key]
        return len(self._items)

    def _make_room(self) -> None:
        """Make room for one more session (the lock held); TurnError 503 when none may go."""
        if self._trim(self.max_items - 1) < self.max_items:
            return
        held = len(self._items)
        pending = sum(self._pending(s) for s in self._items.values())
        why = []
        if pending:
            why.append(f"{_count(pending, 'finished turn')} not yet handed to the tracker")
        if held > pending:
            why.append(f"{held - pending} used in the last {self.idle_s / 3600:g} h")
        raise TurnError(
            f"the service holds {_count(held, 'game')} ({'; '.join(why)}), the most it holds, "
            "and can let go of none of them yet: try again later",
            503,
        )

    def _drop_stale(self) -> list[str]:
        """Let go of the sessions started over :attr:`max_age_s` ago (the lock held); their
        ids, for the database."""
        stale = self.clock() - self.max_age_s
        dropped = [k for k, s in self._items.items() if s.created < stale]
        for old in dropped:
            del self._items[old], self._used[old]
            self._alive.pop(old, None)
        return dropped

    def sweep(self) -> int:
        """Drop the sessions started over :attr:`max_age_s` ago, from memory and the database
        (with their photos, and the rows memory had let go of), so that an idle server holds no
        day-old game; run periodically. Returns how many were dropped from memory."""
        with self._lock:
            dropped = self._drop_stale()
        if self.database is not None:
            self.database.delete(dropped, before=self.clock() - self.max_age_s)
        if dropped:
            log.info(
                "dropped %d sessions started over %g h ago", len(dropped), self.max_age_s / 3600
            )
        return len(dropped)

    def save(self, session: S) -> None:
        """Write ``session`` to the database (nothing without one). When that fails it goes
        back to its last saved state and TurnError says so: 409 when another process moved it
        meanwhile (:class:`service.turn_db.TurnConflict`), else 503.

        Going back swaps the file's copy in for ``session``, which is then stale for every
        request that still holds it (one waiting on its lock): saving a stale copy is refused
        with 409, so a move reported undone is never written by the next one."""
        if self.database is None:
            return
        from service.turn_db import TurnConflict

        noun = self._noun(session)
        if not self._current(session):
            raise TurnError(
                f"this {noun} changed while this move waited (a move made meanwhile could not "
                f"be saved and was undone, or the {noun} was dropped): this move was not made; "
                f"GET the {noun} again",
                409,
            )
        try:
            self.database.save(session)
        except Exception as exc:
            conflict = isinstance(exc, TurnConflict)
            if conflict:
                log.warning("%s", exc)
            else:
                log.exception("%s %s could not be saved", noun, session.id)
            self._go_back(session)
            if conflict:
                raise TurnError(
                    f"{exc}: this move was not made; the {noun} is as the file holds it now "
                    "(GET it again), and one dicecam serve per data folder avoids this",
                    409,
                ) from None
            undone = "its last move was undone" if session.moves else f"the {noun} was not started"
            raise TurnError(
                f"the {noun} could not be saved ({_reason(exc)}); {undone}, try again", 503
            ) from None

    def _go_back(self, session: S) -> None:
        """Put the file's copy of ``session`` in its place (a save of it failed): held when it
        was, else read back when next asked for; ``session`` is stale from now on."""
        try:
            restored = self.database.load(self._restore, since=session.created, ids=[session.id])
        except Exception:  # the file cannot be read either: read back when next asked for
            log.exception("%s %s could not be read back", self._noun(session), session.id)
            restored = []
        with self._lock:
            if self._alive.get(session.id) is session:
                del self._alive[session.id]
            if session.id in self._items and restored:
                self._items[session.id] = self._alive[session.id] = restored[0]
            elif session.id in self._items:
                del self._items[session.id], self._used[session.id]


def _reason(exc: Exception) -> str:
    """Why a save failed, in a sentence a client may read: the database driver's own error for
    one SQLAlchemy wraps (its text carries the statement and its values: a tracker token)."""
    from sqlalchemy.exc import DBAPIError

    if isinstance(exc, DBAPIError) and exc.orig is not None:
        exc = exc.orig
    return f"{type(exc).__name__}: {exc}"
