"""One move at a time on the camera page, in Debian's chromium (Playwright): a tap on Bank while
a roll is on its way to the service sends nothing. The service is real; the gate of
``test_page_timeouts`` holds the roll until the test opens it."""

from __future__ import annotations

import httpx
import pytest

from .test_page_timeouts import gated  # noqa: F401 (a fixture)
from dicecam_testing.page import wait_on_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_bank_tapped_while_a_roll_is_on_its_way_sends_nothing(chromium, gated):  # noqa: F811
    from playwright.sync_api import expect

    server, gate = gated
    page = chromium.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    moves: list[str] = []
    page.on("request", lambda r: moves.append(r.url) if "/api/v1/turns/" in r.url else None)
    page.goto(server.url + "/")
    page.fill("#player", "ada")
    page.click("#new-turn")
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
    turn = f"{server.url}/api/v1/turns/{page.evaluate('window.dicecam.turn.id')}"
    page.fill("#typed", "1 5 2 3 4 6")
    page.press("#typed", "Enter")
    page.get_by_role("button", name="Keep 1 5,").click()
    expect(page.locator("#turn-total")).to_have_text("150")
    expect(page.locator("#bank")).to_be_enabled()

    gate.hold("/rolls")  # the next roll is slow to answer
    page.fill("#typed", "1 2 2 3")
    page.press("#typed", "Enter")
    wait_on_page(page, lambda: page.evaluate("window.dicecam.busy"), "the roll on its way")
    page.click("#bank")  # a tap on Bank meanwhile: ignored, not a bank of 150 over the roll
    page.wait_for_timeout(300)
    gate.release()
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_keep")
    assert not [u for u in moves if "/bank" in u], moves
    now = httpx.get(turn, timeout=30).json()
    assert (now["rolls"], now["outcome"], now["over"]) == (2, None, False), now
    assert not errors, errors


def test_a_roll_on_a_keep_taken_back_and_changed_elsewhere_shows_the_turn_as_it_is(
    chromium,
    gated,  # noqa: F811
):
    """The page sends the turn's moves it shows: a keep taken back and another made in another
    tab leave the roll count as it was, and only the moves tell the turns apart."""
    from playwright.sync_api import expect

    server, _ = gated
    page = chromium.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server.url + "/")
    page.fill("#player", "ada")
    page.click("#new-turn")
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
    turn = f"{server.url}/api/v1/turns/{page.evaluate('window.dicecam.turn.id')}"
    page.fill("#typed", "1 5 2 3 4 6")
    page.press("#typed", "Enter")
    page.get_by_role("button", name="Keep 1 5,").click()
    expect(page.locator("#turn-total")).to_have_text("150")

    # another tab: the keep of 1 5 taken back, 1 alone kept (5 dice to roll, 100 points)
    httpx.post(f"{turn}/undo", timeout=30).raise_for_status()
    httpx.post(f"{turn}/keep", json={"dice": [1]}, timeout=30).raise_for_status()
    page.fill("#typed", "2 2 3 4")  # the 4 dice this page shows
    page.press("#typed", "Enter")
    expect(page.locator("#turn-total")).to_have_text("100")  # read again, shown as it is
    expect(page.locator("#dice-left")).to_have_text("5")
    expect(page.locator("#message")).to_contain_text("Roll 5 dice, or bank 100")
    assert httpx.get(turn, timeout=30).json()["rolls"] == 1
    assert not errors, errors
