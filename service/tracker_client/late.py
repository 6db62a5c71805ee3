"""When a queued turn can no longer count: the tracker enters a turn only on the player's
local day it was played (:mod:`service.tracker.store`, "scores must be reported day-of"), so
the outbox tells it how old a turn is (``age_s``), and refuses itself a turn it cannot deliver
in time, moving it to ``rejected/`` with a reason the player reads (``dicecam outbox list``,
the camera page): kept whole, never sent to count on another day."""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime
from typing import Any

from service.tracker_client.outbox import Outbox, OutboxEntry

__all__ = ["LATE_AFTER_S", "age_s", "late", "not_entered", "refuse_late", "with_age"]


LATE_AFTER_S = 22 * 3600.0
"""A queued turn this old can no longer count: the tracker enters a turn only on the local day
it was played, from 8:00 to 20:00 (under 22 hours, a daylight-saving change included), and
refuses it later. The outbox refuses such a turn itself when it cannot ask the tracker."""


def age_s(entry: OutboxEntry, now: datetime) -> float | None:
    """Seconds from the entry's queueing (when the turn was played) to ``now``, both on this
    client's clock; None when its time cannot be read."""
    try:
        queued = datetime.fromisoformat(entry.created_at)
    except (TypeError, ValueError):
        return None
    if queued.tzinfo is None:
        return None
    return max(0.0, (now - queued).total_seconds())


def with_age(entry: OutboxEntry, now: datetime) -> dict[str, Any]:
    """The turn's body with ``age_s``, the seconds from its queueing (when it was played) to
    ``now``, both read on this client's clock: the tracker refuses a turn played on another day
    than the one it arrives on. A duration, so a client clock set wrong does no harm; an entry
    without a readable time is sent as it is."""
    age = age_s(entry, now)
    return entry.turn if age is None else {**entry.turn, "age_s": round(age, 3)}


def not_entered(why: str) -> str:
    return (
        f"not entered: {why}; scores must be reported day-of (a missed day is a missed turn), "
        "so it is kept in the outbox's rejected/ with its photos"
    )


def late(entry: OutboxEntry, age: float, why: str) -> str:
    """The reason a turn queued ``age`` seconds ago, that cannot be delivered now, is refused."""
    return not_entered(
        f"the turn was played {age / 3600:.0f} hours ago (queued {_in_utc(entry.created_at)} "
        f"UTC) and {why}, and the tracker takes a turn on the day it was played only"
    )


def _in_utc(created_at: str) -> str:
    """A queueing time to the minute in UTC (a client's clock may give another zone)."""
    try:
        return datetime.fromisoformat(created_at).astimezone(UTC).strftime("%Y-%m-%dT%H:%M")
    except (TypeError, ValueError):
        return created_at[:16]


def refuse_late(outbox: Outbox, now: datetime, keep: Collection[str] = ()) -> dict[str, str]:
    """Move the pending turns queued :data:`LATE_AFTER_S` or more before ``now`` to
    ``rejected/`` with the reason (kept whole, photos and all): no tracker would enter them
    now, and nobody sends them (the service let go of the turn with its player's token). The
    keys in ``keep`` are left to whoever still sends them. Returns the reasons by key."""
    refused: dict[str, str] = {}
    for entry in outbox.entries("pending"):
        age = age_s(entry, now)
        if entry.key in keep or age is None or age < LATE_AFTER_S:
            continue
        why = "nobody could send it since" + (
            f" (last try: {entry.last_error})" if entry.last_error else ""
        )
        entry.state, entry.last_error = "rejected", late(entry, age, why)
        outbox.write(entry)
        refused[entry.key] = entry.last_error
    return refused
