"""``TrackerClient``: register, log in, submit turns through the on-disk outbox."""

from __future__ import annotations

import contextlib
import os
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from service.tracker_client.api import TrackerApi
from service.tracker_client.errors import (
    TrackerAuthError,
    TrackerError,
    TrackerNotFound,
    TrackerRejected,
    TrackerUnavailable,
)
from service.tracker_client.late import LATE_AFTER_S, age_s, late, not_entered, with_age
from service.tracker_client.outbox import Outbox, OutboxEntry
from service.tracker_client.turns import RollEvidence, TurnSubmission, without_photos

__all__ = [
    "DeliveryReport",
    "RollEvidence",
    "TrackerClient",
    "TurnSubmission",
    "without_photos",
]


@dataclass
class DeliveryReport:
    """What ``deliver_pending`` did: results by key, refusals by key, keys still waiting (with
    why, by key, in ``pending_errors``), and the queued turns it left alone: another player's
    (by key, the player: this token may not submit them) and another tracker's (by key, that
    tracker's URL)."""

    delivered: dict[str, dict[str, Any]] = field(default_factory=dict)
    rejected: dict[str, str] = field(default_factory=dict)
    pending: list[str] = field(default_factory=list)
    pending_errors: dict[str, str] = field(default_factory=dict)
    """Why each turn of ``pending`` waits: the error of its last try (the tracker down:
    connection refused, a timeout, a 503), as the outbox keeps it (``last_error``)."""
    other_players: dict[str, str] = field(default_factory=dict)
    other_trackers: dict[str, str] = field(default_factory=dict)


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _stored_turn(resp: httpx.Response, base_url: str) -> dict[str, Any]:
    """The turn a tracker stored, as it answers a POST of one; any other answer (that of
    `dicecam serve`'s own address, which starts a game there) is :class:`TrackerUnavailable`:
    the turn stays queued, for the right URL (``--retarget``), never taken as delivered."""
    with contextlib.suppress(ValueError):  # not JSON
        body = resp.json()
        if isinstance(body, dict) and {"id", "day", "score"} <= body.keys():
            return body
    raise TrackerUnavailable(
        f"expected a tracker at {base_url}, got an answer with no stored turn "
        "(`dicecam serve`'s tracker is at its /tracker)"
    )


class TrackerClient(TrackerApi):
    """Talks to a dicecam tracker at ``base_url`` (e.g. ``http://127.0.0.1:8000/tracker``).

    Turns go through an on-disk outbox (``outbox_dir``, default ``<data_dir>/outbox``): written
    before they are sent, kept until the tracker acknowledges them, delivered exactly once thanks
    to the turn's idempotency key. ``clock`` (aware, default UTC now) times a queued turn's age.
    The plain calls (log in, the standings, a player's history) are :class:`TrackerApi`'s.

    Example (not run: needs a running tracker):
        >>> c = TrackerClient("http://127.0.0.1:8000/tracker")  # doctest: +SKIP
        >>> c.login("heather", "correct horse")  # doctest: +SKIP
        >>> c.submit_turn(TurnSubmission(player="heather", score=600))  # doctest: +SKIP
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        outbox_dir: str | os.PathLike[str] | None = None,
        timeout: float = 10.0,
        retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 300.0,
        transport: httpx.BaseTransport | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        super().__init__(base_url, token=token, timeout=timeout, transport=transport)
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.outbox = Outbox(outbox_dir)
        self.clock = clock or _utcnow
        """This machine's clock (aware): when a turn is queued, and its age when it is sent."""
        self._lock = threading.Lock()

    # -- turns through the outbox ------------------------------------------------------------

    def queue(self, turn: TurnSubmission) -> OutboxEntry:
        """Write ``turn`` to the outbox (once: a known key keeps its entry) and return its entry,
        which :meth:`deliver_pending` delivers later."""
        entry = OutboxEntry(
            key=turn.idempotency_key,
            base_url=self.base_url,
            turn=turn.to_json(),
            created_at=self.clock().isoformat(),
        )
        self.outbox.put(entry)
        return self.outbox.find(turn.idempotency_key) or entry

    def submit_turn(self, turn: TurnSubmission, *, retries: int | None = None) -> dict[str, Any]:
        """Queue ``turn`` in the outbox, then deliver it (retrying with exponential backoff).

        Returns the tracker's stored turn. Raises :class:`TrackerUnavailable` when it could not
        be delivered now (it stays queued for :meth:`deliver_pending`), :class:`TrackerRejected`
        when the tracker refused it (kept under ``rejected/`` with the reason).
        """
        self.queue(turn)
        tries = self.retries if retries is None else retries
        for attempt in range(tries + 1):
            try:
                return self.deliver(turn.idempotency_key, force=True) or {}
            except TrackerUnavailable:
                if attempt == tries:
                    raise
                time.sleep(self._delay(attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    def deliver_pending(self, *, force: bool = False, retarget: bool = False) -> DeliveryReport:
        """Try every queued turn for this tracker once (those due, or all with ``force``).

        With a token, only its player's turns are sent (the tracker refuses the others; they
        stay queued for their own player). Turns queued for another tracker URL are left alone,
        or, with ``retarget``, sent here instead (the URL they were queued for was wrong), once
        this URL has shown it is a tracker's. Raises :class:`TrackerNotFound`, nothing sent or
        changed, when it is not (``GET /api/v1/me`` answered as no tracker does).
        """
        report = DeliveryReport()
        now = time.time()
        due: list[OutboxEntry] = []
        for entry in self.outbox.entries("pending"):
            if entry.base_url.rstrip("/") != self.base_url and not retarget:
                report.other_trackers[entry.key] = entry.base_url
            elif not force and entry.next_attempt_at > now:
                report.pending.append(entry.key)
                if entry.last_error:
                    report.pending_errors[entry.key] = entry.last_error
            else:
                due.append(entry)
        mine: str | None = None
        if due and (self.token or any(e.base_url.rstrip("/") != self.base_url for e in due)):
            try:
                mine = self._tracker_player()  # before any turn is sent or retargeted
            except TrackerUnavailable as exc:  # each turn's try failed, as a POST's would
                for entry in due:
                    self._settle_failure(entry, exc, report)
                return report
        for entry in due:
            if entry.base_url.rstrip("/") != self.base_url:
                entry.base_url = self.base_url
                self.outbox.write(entry)
            player = str(entry.turn.get("player", ""))
            if self.token and player.strip().lower() != (mine or "").strip().lower():
                report.other_players[entry.key] = player
                continue
            try:
                report.delivered[entry.key] = self._deliver(entry)
            except TrackerAuthError:
                report.pending.append(entry.key)
                raise
            except TrackerUnavailable as exc:
                report.pending.append(entry.key)
                report.pending_errors[entry.key] = str(exc)
            except TrackerRejected as exc:
                report.rejected[entry.key] = exc.detail
        return report

    def _settle_failure(
        self, entry: OutboxEntry, exc: TrackerUnavailable, report: DeliveryReport
    ) -> None:
        """Record in the outbox and in ``report`` that ``entry`` could not be sent (``exc``)."""
        with self._lock:
            failed = self._failed(entry, exc)
        if isinstance(failed, TrackerRejected):
            report.rejected[entry.key] = failed.detail
        else:
            report.pending.append(entry.key)
            report.pending_errors[entry.key] = str(exc)

    def deliver(self, key: str, *, force: bool = False) -> dict[str, Any] | None:
        """Deliver the queued turn ``key`` if it is due (or with ``force``): the tracker's
        stored turn, or None while it waits for its next try. A turn delivered earlier answers
        its stored result; one refused earlier raises :class:`TrackerRejected` again.

        Raises KeyError when the outbox holds no such turn.
        """
        entry = self.outbox.find(key)
        if entry is None:
            raise KeyError(f"no turn {key!r} in the outbox {self.outbox.directory}")
        if entry.state == "delivered":
            return entry.result or {}
        if entry.state == "rejected":
            raise TrackerRejected(0, entry.last_error or "rejected earlier")
        if not force and entry.next_attempt_at > time.time():
            return None
        return self._deliver(entry)

    def deliver_forever(self, stop: threading.Event, *, poll: float = 5.0) -> None:
        """Deliver queued turns until ``stop`` is set (run it in a background thread)."""
        while not stop.is_set():
            with contextlib.suppress(TrackerAuthError):
                self.deliver_pending()
            stop.wait(poll)

    def _delay(self, attempt: int) -> float:
        base = min(self.max_backoff, self.backoff * (2**attempt))
        return base * (0.5 + random.random() / 2)

    def _deliver(self, entry: OutboxEntry) -> dict[str, Any]:
        with self._lock:
            try:
                stored = _stored_turn(self._post_to_a_tracker(entry), self.base_url)
            except (TrackerAuthError, TrackerUnavailable) as exc:
                failed = self._failed(entry, exc)
                if failed is exc:
                    raise
                raise failed from exc
            except TrackerRejected as exc:
                self._refuse(entry, exc.detail)
                raise
            entry.state, entry.result, entry.last_error = "delivered", stored, None
            entry.turn = without_photos(entry.turn)  # the tracker holds them now
            entry.attempts += 1
            self.outbox.write(entry)
            return entry.result

    def _post_to_a_tracker(self, entry: OutboxEntry) -> httpx.Response:
        """POST ``entry``'s turn; a refusal (4xx) is :class:`TrackerRejected` once ``base_url``
        has shown it is a tracker's (``GET /api/v1/me`` names the token's player), else
        :class:`TrackerUnavailable`, the turn kept: another server's 4xx (`dicecam serve`'s own
        address refuses a tracker's turn body with 422) is no tracker's refusal, and the turn
        is still to be handed to the right URL (``--retarget``)."""
        try:
            return self._post_turn(entry)
        except TrackerAuthError:
            raise
        except TrackerRejected as exc:
            if exc.status == 0:  # refused here, after the tracker named the player's zone
                raise
            try:
                self._tracker_player()
            except TrackerNotFound as found:
                raise TrackerUnavailable(
                    f"expected a tracker at {self.base_url}, got {exc.status} to POST "
                    f"/api/v1/turns ({exc.detail}) and {found.status} to GET /api/v1/me "
                    "(`dicecam serve`'s tracker is at its /tracker)"
                ) from exc
            raise

    def _failed(self, entry: OutboxEntry, exc: TrackerError) -> TrackerError:
        """Record that ``entry`` could not be delivered (``exc``: the tracker down, or the
        token refused) and return the error to raise: ``exc``, the turn kept for a later try
        (with ``last_error``), or for a turn too old to count a :class:`TrackerRejected`, the
        turn refused as late (settled, not retried)."""
        age = age_s(entry, self.clock())
        if age is None or age < LATE_AFTER_S:
            self._note_failure(entry, str(exc))
            return exc
        why = late(entry, age, f"could not be delivered since ({exc})")
        self._refuse(entry, why)
        return TrackerRejected(0, why)

    def _refuse(self, entry: OutboxEntry, why: str) -> None:
        entry.state, entry.last_error = "rejected", why
        entry.attempts += 1
        self.outbox.write(entry)

    def _post_turn(self, entry: OutboxEntry) -> httpx.Response:
        now = self.clock()
        body = with_age(entry, now)
        try:
            return self._request("POST", "/api/v1/turns", json=body)
        except TrackerRejected as exc:
            # a tracker older than age_s refuses the unknown field: send the turn as it was,
            # if that tracker would count it on the day it was played
            older = exc.status == 422 and "age_s" in exc.detail and "Extra inputs" in exc.detail
            if not older or body is entry.turn:
                raise
        self._check_same_day(float(body["age_s"]), now)
        return self._request("POST", "/api/v1/turns", json=entry.turn)

    def _check_same_day(self, age: float, now: datetime) -> None:
        """:class:`TrackerRejected` (status 0: refused here) unless a turn played ``age``
        seconds before ``now`` was played on the player's day of now (their zone from the
        tracker): a tracker that cannot be told a turn's age counts it on the day it arrives."""
        from zoneinfo import ZoneInfo

        name = self.me().get("timezone")
        try:
            zone = ZoneInfo(str(name))
        except (ValueError, KeyError) as exc:  # ZoneInfoNotFoundError is a KeyError
            raise TrackerRejected(
                0,
                not_entered(
                    f"this tracker cannot be told when the turn was played, and its zone for the "
                    f"player, {name!r}, is not one this machine knows ({exc}) to tell the day"
                ),
            ) from None
        played = (now - timedelta(seconds=age)).astimezone(zone).date()
        today = now.astimezone(zone).date()
        if played != today:
            raise TrackerRejected(
                0,
                not_entered(
                    f"the turn was played on {played.isoformat()} and it is {today.isoformat()} "
                    f"now in {name}; this tracker is older than age_s and cannot be told so, so "
                    f"it would count the turn on {today.isoformat()}: it is not sent"
                ),
            )

    def _note_failure(self, entry: OutboxEntry, error: str) -> None:
        entry.attempts += 1
        entry.last_error = error
        entry.next_attempt_at = time.time() + self._delay(entry.attempts - 1)
        self.outbox.write(entry)
