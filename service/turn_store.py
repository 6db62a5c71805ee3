"""The turns the service holds: by id, a day at most, saved after every move when there is a
database (:mod:`service.turn_db`) and read back from it; finished turns go to the submitter."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection
from typing import Any

from service.session_store import SessionStore
from service.turns import MORNING_ROLL, Submitter, TurnError, TurnSession

__all__ = ["TurnStore"]

log = logging.getLogger("dicecam.service")


ROLL_GAME_ROUTES = {
    "solitaire-dice": "POST /api/v1/sheets (a score sheet kept across rolls)",
    "low-high": "POST /api/v1/low-high/turns",
}
"""Where the games that are not keep-and-reroll turns are played across rolls."""


def undelivered(submission: dict[str, Any] | None) -> bool:
    """Whether a finished turn with this receipt is not yet delivered: never handed over,
    failed (the outbox could not take it) or queued (sent only with the turn's token)."""
    return submission is None or submission.get("status") in ("queued", "failed")


class TurnStore(SessionStore[TurnSession]):
    """Turn sessions by id: at most ``max_turns`` in memory (the least recently used let go of
    first, never a finished turn the submitter has not taken yet: :meth:`_pending`; see
    :class:`SessionStore`), none older than a day. With a ``database``
    (:class:`service.turn_db.TurnDatabase`) every change is saved (:meth:`save`) and a turn
    memory let go of is read back from it."""

    def __init__(
        self,
        submitter: Submitter | None = None,
        max_turns: int = 500,
        database: Any = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.submitter = submitter
        self._advisors: dict[str, Any] = {}
        super().__init__(database, max_turns, clock)
        if database is not None:
            database.remove_orphan_photos()

    def _advisor(self, game: str, rules: dict[str, Any], on_board: bool = True) -> Any:
        from scoring import get_advisor

        key = (game, tuple(sorted(rules.items())), on_board)
        if key not in self._advisors:
            try:
                self._advisors[key] = get_advisor(game, on_board=on_board, **rules)
            except Exception:  # no advice is better than no turn
                self._advisors[key] = None
        return self._advisors[key]

    def _new(
        self, player: str, game: str, rules: dict[str, Any] | None = None, on_board: bool = True
    ) -> TurnSession:
        from scoring import FarkleTurn, get_game

        rules = dict(rules or {})
        try:
            game_rules = get_game(game, **rules)
        except (TypeError, ValueError) as exc:  # a house rule of another game, a bad value
            raise TurnError(str(exc), 422) from None
        if not callable(getattr(game_rules, "keeps", None)):
            raise TurnError(
                f"{game} is not played as keep-and-reroll turns: play it with "
                f"{ROLL_GAME_ROUTES.get(game, 'its own routes')}, or score one roll with "
                f"POST /api/v1/score?game={game}",
                422,
            )
        if not on_board and game_rules.entry_threshold <= 0:
            raise TurnError(
                f"expected on_board true for {game}: it has no entry score to make", 422
            )
        advisor = self._advisor(game, rules, on_board)
        session = TurnSession(player, game, FarkleTurn(game_rules), game_rules, advisor)
        session.on_board, session.created = on_board, self.clock()
        return session

    def _pending(self, session: TurnSession) -> bool:
        """A finished turn the tracker's outbox does not hold yet (never handed over, or it
        failed), or that the outbox holds and only this turn sends (queued: its token): it
        stays held for :meth:`retry_queued`, :meth:`relogin` and :meth:`sweep`."""
        return session.over and undelivered(session.submission)

    def _pending_ids(self, since: float) -> set[str]:
        """The finished turns of the file not yet delivered (:meth:`_pending`)."""
        return {i for i, receipt in self.database.finished(since) if undelivered(receipt)}

    def _restore(self, row: Any, photos: list[Any]) -> TurnSession:
        """A saved turn (a :class:`service.turn_db.TurnRow`) played again from its moves, its
        photos left on disk (``photos``: each roll's file, or None)."""
        session = self._new(row.player, row.game, row.rules, row.on_board is not False)
        session.id, session.created = row.id, row.created
        session.replay(row.moves)
        if len(row.rolls) != len(session.rolls):
            raise ValueError(f"expected {len(session.rolls)} saved rolls, got {len(row.rolls)}")
        for record, saved, photo in zip(session.rolls, row.rolls, photos, strict=True):
            record.reading, record.held, record.photo_file = saved.get("reading"), None, photo
            record.source = saved.get("source", record.source)
        session.submission = row.submission
        session.tracker_url, session.tracker_token = row.tracker_url, row.tracker_token
        return session

    def start(
        self,
        player: str,
        game: str,
        *,
        tracker_url: str | None = None,
        tracker_token: str | None = None,
        rules: dict[str, Any] | None = None,
        on_board: bool = True,
    ) -> TurnSession:
        """A new turn of ``game`` for ``player`` under the house ``rules`` (keyword options of
        :func:`scoring.get_game`; TurnError 422 names the valid ones). ``on_board=False``: the
        player has not made the game's entry score yet (F7, G3), so a turn below it banks
        nothing and is advised so."""
        session = self._new(player, game, rules, on_board)
        session.tracker_url, session.tracker_token = tracker_url, tracker_token
        self._admit(session)
        return session

    def get(self, turn_id: str) -> TurnSession:
        session = self._find(turn_id)
        if session is None:
            kept = "a day" if self.database is not None else "in memory until restart"
            raise TurnError(f"no turn with id {turn_id!r} (turns are kept {kept})", 404)
        return session

    def finish(self, session: TurnSession) -> None:
        """Submit a finished Morning Roll turn (bank or bust) once, then let go of its photos
        (a submitted or queued turn keeps them in the tracker or the outbox)."""
        if not session.over or session.submission is not None:
            return
        if session.game != MORNING_ROLL:
            session.submission = {
                "status": "not-submitted",
                "detail": "only Morning Roll turns are tracked",
            }
        elif self.submitter is None:
            session.submission = {"status": "not-submitted", "detail": "no tracker configured"}
        else:
            try:
                session.submission = self.submitter(session)
            except Exception as exc:  # the turn is kept; the player sees why it was not sent
                log.warning("turn %s could not be handed to the tracker: %s", session.id, exc)
                session.submission = {"status": "failed", "detail": f"{type(exc).__name__}: {exc}"}
                return  # with its photos: retry_queued hands it over again (a full disk?)
        for roll in session.rolls:
            roll.photo = None

    def sweep(self) -> int:
        """Drop the day-old turns (:meth:`SessionStore.sweep`), then let the submitter refuse
        the queued turns too old to count that no turn held here still sends (their tracker
        was down past their day). Returns how many turns were dropped."""
        dropped = super().sweep()
        refuse = getattr(self.submitter, "refuse_late", None)
        if refuse is not None:
            with self._lock:
                held = list(self._items.values())
            refuse(held)
        return dropped

    def relogin(
        self, player: str, tracker_url: str, token: str, turns: Collection[str] = ()
    ) -> int:
        """``player`` logged in to ``tracker_url`` (again) from a page that holds ``turns``
        (their ids): those of the player's open Morning Roll turns take the new ``token`` (a
        turn started before the login is submitted when it ends), and those finished whose
        token it refused (receipt ``login``) take it and are tried again now. A turn the page
        does not name never gets the token: anyone may start a turn under a player's name, or
        with a made-up token the tracker refuses. Returns how many receipts changed (see
        :meth:`retry_queued`)."""
        name = player.strip().lower()
        found = map(self._found, dict.fromkeys(turns))  # in memory or read back
        mine = [
            t
            for t in found
            if t is not None and t.player.strip().lower() == name and t.tracker_url == tracker_url
        ]
        for turn in mine:
            self._give_token(turn, token)
        waiting = [t for t in mine if (t.submission or {}).get("login")]
        for turn in waiting:
            with self._moving(turn) as session:  # a pass or a login of this turn meanwhile?
                if session is None or not (session.submission or {}).get("login"):
                    continue
                session.tracker_token = token
                session.submission = {
                    "status": "queued",
                    "detail": "the player logged in again: sending the turn with the new token",
                }
                try:
                    self.save(session)
                except TurnError:
                    log.warning("turn %s: its new token could not be saved", session.id)
        return self.retry_queued(now={t.id for t in waiting}) if waiting else 0

    def _found(self, turn_id: str) -> TurnSession | None:
        """The turn ``turn_id`` in memory or read back from the database; None when there is
        none, or the database cannot be read (said in the log: the login stands)."""
        try:
            return self._find(turn_id)
        except Exception as exc:  # a locked or broken file: the turn keeps its token
            log.warning("turn %s: not read back for a new login: %s", turn_id, exc)
            return None

    def _give_token(self, turn: TurnSession, token: str) -> None:
        """An open Morning Roll ``turn`` takes ``token``, saved (one that finished meanwhile
        keeps the token it was handed over with)."""
        with self._moving(turn) as session:
            if session is None or session.over or session.game != MORNING_ROLL:
                return
            if session.tracker_token == token:
                return
            session.tracker_token = token
            try:
                self.save(session)
            except TurnError:
                log.warning("turn %s: the token of a new login could not be saved", session.id)

    def retry_queued(self, now: Collection[str] = ()) -> int:
        """Try again the turns whose submission is ``queued`` (the tracker was down), through
        the submitter's ``retry``, and hand over again those whose submission ``failed`` (the
        outbox could not be written: a full or read-only disk) or that finished without one
        (the process stopped between saving the last move and handing the turn over); a turn
        whose receipt changes is saved. The turns whose ids are in ``now`` are tried at once,
        past the outbox's back-off (their player just logged in again). Returns how many
        changed."""
        retry = getattr(self.submitter, "retry", None)
        if retry is None:  # no submitter, or one that cannot retry
            return 0
        with self._lock:
            queued = [
                t
                for t in self._items.values()
                if (t.submission or {}).get("status") in ("queued", "failed")
                or (t.over and t.submission is None)
            ]
        changed = 0
        for turn in queued:
            with self._moving(turn) as session:  # as a move: none is made or saved meanwhile
                if session is not None:
                    changed += self._retry(session, retry, session.id in now)
        return changed

    def _retry(self, session: TurnSession, retry: Callable[..., Any], now: bool) -> bool:
        """:meth:`retry_queued` of one turn, its lock held and the store's copy (a finishing
        move undone by a failed save meanwhile left a copy that is not over): whether its
        receipt changed."""
        if session.over and session.submission is None:  # never handed over: as at its move
            self.finish(session)
            self._save_receipt(session)
            return session.submission is not None
        status = (session.submission or {}).get("status")
        if status not in ("queued", "failed"):  # settled meanwhile (by another pass)
            return False
        try:
            if status == "failed":
                receipt = self.submitter(session)
            else:
                receipt = retry(session, now=True) if now else retry(session)
        except Exception as exc:  # the next pass tries again; the turn stays as it is
            log.warning("turn %s: retrying its submission failed: %s", session.id, exc)
            return False
        if receipt is None or receipt == session.submission:
            return False
        session.submission = receipt
        if status == "failed":  # handed over now: the outbox or the tracker holds the photos
            for roll in session.rolls:
                roll.photo = None
        self._save_receipt(session)
        return True

    def _save_receipt(self, session: TurnSession) -> None:
        """Save a turn whose receipt changed outside a request; a failure is logged (the next
        pass tries again)."""
        try:
            self.save(session)
        except TurnError:
            log.warning("turn %s: its new receipt could not be saved", session.id)
