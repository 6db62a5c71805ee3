from datetime import UTC, date, datetime, timedelta

import pytest

from service.tracker import rules

UTC = UTC


def at(iso: str) -> datetime:
    return datetime.fromisoformat(iso)


@pytest.mark.parametrize(
    ("local", "open_"),
    [
        ("07:59:59", False),
        ("08:00:00", True),
        ("12:00", True),
        ("19:59:59", True),
        ("20:00:00", False),
        ("20:01", False),
        ("00:30", False),
    ],
)
def test_open_hours_edges_in_local_time(local, open_):
    tz = "America/Chicago"
    now = at(f"2026-01-15T{local}-06:00")  # CST is UTC-6 in January
    if open_:
        assert rules.check_open(now, tz).strftime("%H:%M") == local[:5]
    else:
        with pytest.raises(rules.OutsideOpenHours, match="between 8am and 8pm local time"):
            rules.check_open(now, tz)


def test_local_day_near_midnight_in_far_zones():
    now = at("2026-03-10T18:30:00+00:00")
    assert rules.local_day(now, "Pacific/Kiritimati") == date(2026, 3, 11)  # UTC+14: 08:30
    assert rules.local_day(now, "Pacific/Pago_Pago") == date(2026, 3, 10)  # UTC-11: 07:30
    assert rules.local_day(now, "UTC") == date(2026, 3, 10)


def test_daylight_saving_is_respected():
    # Europe/Paris switches to UTC+2 on 2026-03-29: 06:30 UTC is 08:30 local that day.
    rules.check_open(at("2026-03-29T06:30:00+00:00"), "Europe/Paris")
    with pytest.raises(rules.OutsideOpenHours):
        rules.check_open(at("2026-03-28T06:30:00+00:00"), "Europe/Paris")  # 07:30 local


def test_round_is_the_local_calendar_year():
    now = at("2026-12-31T19:30:00+00:00")
    assert rules.round_of(rules.local_day(now, "Pacific/Kiritimati")) == 2027
    assert rules.round_of(rules.local_day(now, "America/New_York")) == 2026


@pytest.mark.parametrize("bad", ["Mars/Olympus", "", "utc+2", "../etc/passwd", None])
def test_unknown_time_zone_names_what_was_expected(bad):
    with pytest.raises(rules.InvalidTimezone, match="expected an IANA time zone"):
        rules.zone(bad)


def test_naive_clock_is_refused():
    with pytest.raises(ValueError, match="timezone-aware"):
        rules.local_day(datetime(2026, 1, 1, 12), "UTC")


def test_every_minute_of_a_day_is_classified_once():
    start = at("2026-05-05T00:00:00+00:00")
    open_minutes = 0
    for m in range(24 * 60):
        try:
            rules.check_open(start + timedelta(minutes=m), "UTC")
            open_minutes += 1
        except rules.OutsideOpenHours:
            pass
    assert open_minutes == 12 * 60


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("Europe/Paris", "Europe/Berlin", "2026-06-10T22:00:00+00:00"),  # one midnight: that one
        ("Europe/Paris", "Europe/London", "2026-06-10T23:00:00+00:00"),  # an hour later
    ],
)
def test_a_zone_change_between_zones_of_one_midnight_takes_over_at_it(old, new, expected):
    """Where the new zone's midnight is the old zone's own, the change takes over at the end of
    the day under way, not a day later; a zone an hour west takes over an hour later."""
    ask = datetime(2026, 6, 10, 10, 0, tzinfo=UTC)
    assert rules.zone_change_at(ask, old, new).isoformat() == expected
