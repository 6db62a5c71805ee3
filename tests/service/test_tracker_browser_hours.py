"""The game information on the tracker's pages is only available from 8am to 8pm local browser
time (the rules), at the server's clock: seen in a real chromium set to far time zones."""

from __future__ import annotations

import uuid

import httpx
import pytest

from service.tracker import create_app

pytestmark = [pytest.mark.browser]

PAGES = ["/", "/rounds/2026", "/rollcall", "/players/heather", "/turns/1"]


@pytest.fixture
def site(sqlite_url, clock, serve, seed_players):
    clock.set("2026-10-10T12:00:00+00:00")
    app = create_app(sqlite_url, clock=clock)
    server = serve(app)
    auth = seed_players(app, ["heather"])["heather"]
    body = {"player": "heather", "score": 600, "idempotency_key": str(uuid.uuid4())}
    assert (
        httpx.post(server.url + "/api/v1/turns", json=body, headers=auth, timeout=30).status_code
        == 201
    )
    yield server.url, clock
    app.state.db.dispose()


def shown(page) -> tuple[bool, bool]:
    """(game information visible, closed notice visible)."""
    return page.locator("#game").is_visible(), page.locator("#closed").is_visible()


@pytest.mark.parametrize(
    ("zone", "utc", "open_"),
    [
        ("Pacific/Kiritimati", "2026-10-10T18:00:00+00:00", True),  # Oct 11 08:00
        ("Pacific/Kiritimati", "2026-10-10T17:59:00+00:00", False),  # Oct 11 07:59
        ("Pacific/Pago_Pago", "2026-10-11T06:59:00+00:00", True),  # Oct 10 19:59
        ("Pacific/Pago_Pago", "2026-10-11T07:00:00+00:00", False),  # Oct 10 20:00
        # the night the clocks went back: 13:30 UTC was 08:30 the day before, now 07:30
        ("America/Chicago", "2026-11-01T13:30:00+00:00", False),
        ("America/Chicago", "2026-11-01T14:00:00+00:00", True),
    ],
)
def test_pages_show_the_game_only_8am_to_8pm_browser_time(chromium, site, zone, utc, open_):
    url, clock = site
    clock.set(utc)
    context = chromium.new_context(timezone_id=zone)
    page = context.new_page()
    for path in PAGES:
        page.goto(url + path)
        assert shown(page) == (open_, not open_), (zone, utc, path)
        if not open_:
            assert "from 8am to 8pm your time" in page.locator("#closed").inner_text()
            assert page.locator("nav").is_visible()  # Add roll and the other pages stay reachable
    page.goto(url + "/add")  # the form: the server checks the player's hours when it is sent
    assert page.locator("form").is_visible()
    context.close()


def test_a_page_left_open_closes_at_8pm_and_opens_at_8am(chromium, site):
    url, clock = site
    clock.set("2026-10-10T17:59:00+00:00")  # Paris (CEST): 19:59
    context = chromium.new_context(timezone_id="Europe/Paris")
    page = context.new_page()
    page.clock.install()
    page.goto(url + "/")
    assert shown(page) == (True, False)
    page.clock.run_for(2 * 60 * 1000)  # 20:01
    assert shown(page) == (False, True)
    page.clock.run_for(12 * 3600 * 1000)  # 08:01 next morning
    assert shown(page) == (True, False)
    context.close()
