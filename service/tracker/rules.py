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

from datetime import date, datetime, time
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

__all__ = [
    "CLOSES",
    "OPENS",
    "InvalidTimezone",
    "OutsideOpenHours",
    "check_open",
    "current_round",
    "local_day",
    "local_now",
    "round_of",
    "zone",
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
