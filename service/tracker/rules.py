"""Morning Roll's site rules about time: the player's local day, open hours, rounds.

Pure functions of an aware UTC instant and an IANA zone: the server's clock decides, never the
client's.

Example:
    >>> from datetime import datetime, timezone
    >>> now = datetime(2026, 12, 31, 19, 30, tzinfo=timezone.utc)
    >>> local_day(now, "Pacific/Kiritimati")  # UTC+14: already 9:30 on New Year's Day
    datetime.date(2027, 1, 1)
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

__all__ = [
    "CLOSES",
    "OPENS",
    "InvalidTimezone",
    "OutsideOpenHours",
    "check_open",
    "current_round",
    "day_start",
    "local_day",
    "local_now",
    "round_of",
    "zone",
    "zone_to_pick",
    "zone_change_at",
]

OPENS = time(8, 0)
CLOSES = time(20, 0)
"""Scores are entered from 8:00 (inclusive) to 20:00 (exclusive) local time."""


class InvalidTimezone(ValueError):
    pass


class OutsideOpenHours(ValueError):
    pass


@lru_cache(maxsize=1)
def _zones() -> frozenset[str]:
    return frozenset(available_timezones())


def zone(name: str) -> ZoneInfo:
    """The IANA zone ``name`` (e.g. ``Europe/Paris``), or :class:`InvalidTimezone`."""
    if not isinstance(name, str) or name not in _zones():
        raise InvalidTimezone(
            f"expected an IANA time zone name such as 'Europe/Paris' or 'America/Chicago', "
            f"got {name!r}"
        )
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:  # pragma: no cover - listed but broken
        raise InvalidTimezone(f"time zone {name!r} cannot be loaded: {exc}") from exc


NOT_ZONES = frozenset({"localtime"})
"""Names the system's tzdata lists beside the IANA zones that are none: ``localtime`` links to
the server's own ``/etc/localtime``, so a player's days followed whatever the server was set to
(and a database moved to a server without the link could not load it)."""


def zone_to_pick(name: str) -> ZoneInfo:
    """The IANA zone ``name`` a player picks (registering, moving), or
    :class:`InvalidTimezone`: :func:`zone`'s, less :data:`NOT_ZONES` (a zone stored before is
    still loaded by :func:`zone`)."""
    if name in NOT_ZONES:
        raise InvalidTimezone(
            f"expected an IANA time zone name such as 'Europe/Paris' or 'America/Chicago', "
            f"got {name!r} (the server's own zone, not one of IANA's)"
        )
    return zone(name)


def _aware(now: datetime) -> datetime:
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError(f"expected a timezone-aware datetime from the clock, got {now!r}")
    return now


def local_now(now: datetime, tz: str) -> datetime:
    return _aware(now).astimezone(zone(tz))


def local_day(now: datetime, tz: str) -> date:
    """The calendar day in zone ``tz`` at instant ``now``."""
    return local_now(now, tz).date()


def round_of(day: date) -> int:
    """A round is one calendar year."""
    return day.year


def current_round(now: datetime, tz: str = "UTC") -> int:
    """The round under way at ``now`` for a viewer in zone ``tz``: the year of their day. Around
    New Year two rounds are under way at once (Kiritimati starts the next one 26 hours before
    Pago Pago ends this one)."""
    return round_of(local_day(now, tz))


def check_open(now: datetime, tz: str) -> datetime:
    """Return the local time, or raise :class:`OutsideOpenHours` outside 8am-8pm local."""
    local = local_now(now, tz)
    if not (OPENS <= local.time() < CLOSES):
        raise OutsideOpenHours(
            f"scores can only be entered between 8am and 8pm local time; it is "
            f"{local:%H:%M} on {local:%Y-%m-%d} in {tz}"
        )
    return local


def day_start(day: date, tz: str) -> datetime:
    """The first instant (aware UTC) of ``day`` in zone ``tz``: its midnight, or the end of the
    clock change where a zone skips midnight (Santiago's spring forward)."""
    return datetime.combine(day, time(0), tzinfo=zone(tz)).astimezone(UTC)


def zone_change_at(now: datetime, old: str, new: str) -> datetime:
    """When a player in zone ``old`` who asks at ``now`` to play in zone ``new`` from then on
    goes over to it: at the first midnight in ``new`` once the day under way in ``old`` is over.

    Every turn after it is then for a later day than every turn before it could be (one turn a
    day holds across the change, no day is played again or played late), and the new zone's first
    day starts at its midnight, 8 hours before it opens. A far move east may skip a day.

    Example:
        >>> ask = datetime(2026, 3, 10, 15, 0, tzinfo=UTC)  # 11:00 on the 10th in New York
        >>> zone_change_at(ask, "America/New_York", "Europe/Paris").isoformat()
        '2026-03-11T23:00:00+00:00'
    """
    over = day_start(local_day(now, old) + timedelta(days=1), old)
    first = day_start(local_day(over, new), new)
    return first if first >= over else day_start(local_day(over, new) + timedelta(days=1), new)
