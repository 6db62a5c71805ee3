"""The zone the tests that use the real clock register their players in (``midday_zone``):
the tracker takes their turns whatever the hour CI runs at, as if the clock were moved."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from service.tracker import rules

from .conftest import midday_zone_name


@pytest.mark.parametrize("minute", [0, 59])
@pytest.mark.parametrize("hour", range(24))
def test_the_midday_zone_is_open_at_every_hour_of_the_day(hour: int, minute: int) -> None:
    now = datetime(2026, 11, 27, hour, minute, 59, tzinfo=UTC)
    zone = midday_zone_name(now)
    assert rules.check_open(now, zone).hour == 13, zone  # a known zone, and open
    # open for the test's next hours too, and on the same local day
    later = now + timedelta(hours=6)
    assert rules.check_open(later, zone).date() == rules.local_day(now, zone), zone
