"""The camera page on an unreliable phone, in Debian's chromium (Playwright): a reload mid-turn
brings the same turn back, the network dropping or the service restarting loses nothing and says
so, a move whose answer was lost is not sent twice, a stale tab is told and refreshed, and a new
turn is not started over an open one unasked. Turns are played with typed values (no camera).
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from service.app import create_app
from service.settings import Settings

from .conftest import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.slow]

UNREACHABLE = "Cannot reach the dicecam service"


def service(data_dir: Path, port: int | None = None) -> LiveServer:
    """The service (no tracker) on ``data_dir``, its turns saved there, started."""
    app = create_app(Settings(data_dir=data_dir), tracker_app=None, submitter=None)
    return LiveServer(app, port=port).__enter__()


def server_turn(server: LiveServer, turn_id: str) -> dict:
    return httpx.get(f"{server.url}/api/v1/turns/{turn_id}", timeout=10).json()


def open_page(browser, server: LiveServer, context=None, errors: list[str] | None = None):
    page = (context or browser.new_context()).new_page()
    if errors is not None:
        page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server.url + "/")
    return page


def start_turn(page, player: str = "heather") -> str:
    from playwright.sync_api import expect

    page.fill("#player", player)
    page.click("#new-turn")
    expect(page.locator("#turn-state")).to_have_text("awaiting_roll")
    return page.evaluate("window.dicecam.turn.id")


def keep_button(page, dice: str):
    """The button that keeps ``dice`` ("1 5") of the roll on the page."""
    return page.get_by_role("button", name=f"Keep {dice},")


def roll(page, values: str, state: str = "awaiting_keep") -> None:
    from playwright.sync_api import expect

    page.fill("#typed", values)
    page.press("#typed", "Enter")
    expect(page.locator("#turn-state")).to_have_text(state)


def test_a_move_made_on_an_earlier_roll_is_refused_and_changes_nothing(tmp_path):
    server = service(tmp_path)
    try:
        c = httpx.Client(base_url=server.url, timeout=10)
        t = c.post("/api/v1/turns", json={"player": "tom"}).json()
        turns = f"/api/v1/turns/{t['id']}"
        c.post(f"{turns}/rolls?rolls=0", json={"values": [1, 5, 2, 3, 4, 6]})
        c.post(f"{turns}/keep?rolls=1", json={"dice": [1]})
        c.post(f"{turns}/rolls?rolls=1", json={"values": [5, 2, 3, 3, 4]})
        before = c.get(turns).json()
        for path, body in (("keep", {"json": {"dice": [5]}}), ("bank", {}), ("rolls", {})):
            r = c.post(f"{turns}/{path}?rolls=1", **body)
            assert r.status_code == 409, (path, r.text)
            assert "expected a move after roll 1, the turn has had 2" in r.json()["detail"]
        assert c.get(turns).json() == before
        r = c.post(f"{turns}/keep?rolls=-1", json={"dice": [5]})
        assert r.status_code == 422
        assert c.post(f"{turns}/keep?rolls=2", json={"dice": [5]}).json()["turn_points"] == 150
        c.close()
    finally:
        server.__exit__(None, None, None)
