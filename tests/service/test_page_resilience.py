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
from dicecam_testing.page import wait_on_page

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
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
    return page.evaluate("window.dicecam.turn.id")


def keep_button(page, dice: str):
    """The button that keeps ``dice`` ("1 5") of the roll on the page."""
    return page.get_by_role("button", name=f"Keep {dice},")


def roll(page, values: str, state: str = "awaiting_keep") -> None:
    from playwright.sync_api import expect

    page.fill("#typed", values)
    page.press("#typed", "Enter")
    expect(page.locator("#turn-state")).to_have_attribute("data-state", state)


def test_a_reload_mid_turn_resumes_it_and_a_turn_the_service_forgot_is_named(
    chromium, tmp_path, unused_port
):
    from playwright.sync_api import expect

    # the port is held for the test: the restart below gets it back, no other test process
    server = service(tmp_path, port=unused_port)
    errors: list[str] = []
    try:
        page = open_page(chromium, server, errors=errors)
        turn_id = start_turn(page)
        roll(page, "1 5 2 3 4 6")
        page.reload()  # after a roll: the same turn, its keeps ready
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_keep")
        expect(page.locator("#message")).to_contain_text("Resumed heather's turn")
        assert page.evaluate("window.dicecam.turn.id") == turn_id
        keep = keep_button(page, "1 5")
        expect(keep).to_be_enabled()
        keep.click()
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
        page.reload()  # after a keep: ready for the next roll, or to bank
        expect(page.locator("#turn-total")).to_have_text("150")
        expect(page.locator("#dice-left")).to_have_text("4")
        expect(page.locator("#bank")).to_be_enabled()
        roll(page, "1 2 3 4")  # and the turn goes on from there
        assert server_turn(server, turn_id)["rolls"] == 2
    finally:
        server.__exit__(None, None, None)
    # the service comes back without the turn (another data folder): the page says so
    server = service(tmp_path / "other", port=server.port)
    try:
        page.reload()
        expect(page.locator("#message")).to_contain_text(
            f"no longer knows heather's turn {turn_id}"
        )
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "no turn")
        page.reload()  # said once: the turn is forgotten on the page too
        expect(page.locator("#message")).not_to_contain_text("no longer knows")
    finally:
        server.__exit__(None, None, None)
    assert not errors, errors


def test_the_network_dropping_mid_turn_loses_nothing_and_a_lost_answer_is_not_resent(
    chromium, tmp_path
):
    from playwright.sync_api import expect

    server = service(tmp_path)
    errors: list[str] = []
    context = chromium.new_context()
    try:
        page = open_page(chromium, server, context, errors)
        turn_id = start_turn(page)
        context.set_offline(True)
        page.fill("#typed", "1 5 2 3 4 6")
        page.press("#typed", "Enter")
        expect(page.locator("#message")).to_contain_text(UNREACHABLE)
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
        expect(page.locator("#typed")).to_have_value("1 5 2 3 4 6")  # kept, to send again
        context.set_offline(False)
        page.press("#typed", "Enter")
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_keep")

        keep = keep_button(page, "1 5")
        context.set_offline(True)
        keep.click()
        expect(page.locator("#message")).to_contain_text(UNREACHABLE)
        expect(page.locator("#turn-state")).to_have_attribute(
            "data-state", "awaiting_keep"
        )  # as it was
        expect(keep).to_be_enabled()
        context.set_offline(False)

        # the keep reaches the service, its answer is lost on the way back
        sent: list[str] = []

        def lose_answer(route):
            sent.append(route.request.url)
            route.fetch()
            route.abort("connectionreset")

        page.route("**/keep*", lose_answer)
        page.evaluate("document.getElementById('message').textContent = ''")  # said afresh
        keep.click()
        expect(page.locator("#message")).to_contain_text(UNREACHABLE)
        assert server_turn(server, turn_id)["dice_left"] == 4  # the service made the keep
        page.unroute("**/keep*")
        page.route("**/keep*", lambda route: (sent.append(route.request.url), route.continue_()))
        keep.click()  # tapped again: the turn is read first, and the keep is not sent twice
        expect(page.locator("#message")).to_contain_text("Your last move reached")
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
        expect(page.locator("#turn-total")).to_have_text("150")
        assert len(sent) == 1, sent
        history = server_turn(server, turn_id)["history"]
        assert [r["keep"]["dice"] for r in history] == [[1, 5]]
        page.click("#bank")
        expect(page.locator("#message")).to_contain_text("Banked 150 points")
    finally:
        context.close()
        server.__exit__(None, None, None)
    assert not errors, errors


def test_the_service_restarting_mid_turn_and_the_page_carries_on(chromium, tmp_path, unused_port):
    from playwright.sync_api import expect

    # the port is held for the test: the restart below gets it back, no other test process
    server = service(tmp_path, port=unused_port)
    try:
        page = open_page(chromium, server)
        turn_id = start_turn(page)
        roll(page, "1 1 2 3 4 6")
    finally:
        server.__exit__(None, None, None)
    keep = keep_button(page, "1 1")
    keep.click()  # the service is down
    expect(page.locator("#message")).to_contain_text(UNREACHABLE)
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_keep")
    server = service(tmp_path, port=server.port)  # back, on the same data folder
    try:
        keep.click()
        expect(page.locator("#turn-total")).to_have_text("200")
        roll(page, "5 5 5 2", "awaiting_keep")
        assert server_turn(server, turn_id)["rolls"] == 2
    finally:
        server.__exit__(None, None, None)


def test_a_stale_tab_is_told_and_shows_the_turn_as_it_is(chromium, tmp_path):
    from playwright.sync_api import expect

    server = service(tmp_path)
    try:
        context = chromium.new_context()
        first = open_page(chromium, server, context)
        turn_id = start_turn(first)
        roll(first, "1 5 2 3 4 6")
        second = open_page(chromium, server, context)  # the same turn, resumed
        expect(second.locator("#turn-state")).to_have_attribute("data-state", "awaiting_keep")
        keep_button(first, "1").click()
        expect(first.locator("#dice-left")).to_have_text("5")
        roll(first, "5 2 3 3 4")  # a new roll with a 5 in it
        # the second tab still shows the first roll: its "Keep 5" is of that roll
        keep_button(second, "5").click()
        expect(second.locator("#message")).to_contain_text("moved on elsewhere")
        expect(second.locator("#dice-left")).to_have_text("5")  # the real state now
        expect(second.locator("#turn-total")).to_have_text("100")
        expect(second.locator("#keeps li button")).to_have_count(1)  # Keep 5, of the new roll
        t = server_turn(server, turn_id)
        assert (t["awaiting"], t["turn_points"], t["rolls"]) == ("keep", 100, 2)
        second.locator("#keeps li button").click()  # now a move on the real state
        expect(second.locator("#turn-total")).to_have_text("150")
        # back to the first tab (the phone shows it again): it reads the turn and says so
        first.evaluate("document.dispatchEvent(new Event('visibilitychange'))")
        expect(first.locator("#message")).to_contain_text("The turn moved on elsewhere")
        expect(first.locator("#turn-total")).to_have_text("150")
        context.close()
    finally:
        server.__exit__(None, None, None)


def test_new_turn_over_an_open_one_offers_to_resume_it(chromium, tmp_path):
    from playwright.sync_api import expect

    server = service(tmp_path)
    try:
        page = open_page(chromium, server)
        turn_id = start_turn(page)
        roll(page, "1 5 2 3 4 6")
        keep_button(page, "1").click()
        expect(page.locator("#dice-left")).to_have_text("5")
        page.click("#new-turn")
        expect(page.locator("#open-turn")).to_contain_text("heather already has a Morning Roll")
        expect(page.locator("#open-turn")).to_contain_text("100 points")
        page.click("#resume-turn")
        expect(page.locator("#open-turn")).to_be_hidden()
        assert page.evaluate("window.dicecam.turn.id") == turn_id
        expect(page.locator("#dice-left")).to_have_text("5")
        page.click("#new-turn")
        page.click("#abandon-turn")  # the player means it
        expect(page.locator("#dice-left")).to_have_text("6")
        assert page.evaluate("window.dicecam.turn.id") != turn_id
        start = server_turn(server, turn_id)
        assert (start["over"], start["turn_points"]) == (False, 100)  # left as it was
    finally:
        server.__exit__(None, None, None)


def test_a_second_listing_of_the_same_open_games_leaves_the_resume_buttons_in_place(
    chromium, tmp_path
):
    """Loading the page and typing the name each list the player's open games. A listing like
    the one shown keeps its buttons: one replaced between a press and its release lost the tap
    (a flake in CI, the turn never resumed). A listing that changed is shown afresh."""
    from playwright.sync_api import expect

    server = service(tmp_path)
    try:
        for game in ("morning-roll", "greed"):  # started on another device
            r = httpx.post(
                f"{server.url}/api/v1/turns", json={"player": "kim", "game": game}, timeout=30
            )
            assert r.status_code == 201, r.text
        page = open_page(chromium, server)
        page.fill("#player", "kim")
        page.dispatch_event("#player", "change")
        buttons = page.locator("#open-games-list button")
        expect(buttons).to_have_count(2)
        greed = buttons.filter(has_text="greed").element_handle()

        def list_again() -> None:
            with page.expect_response(lambda r: "/api/v1/open-games" in r.url):
                page.dispatch_event("#player", "change")
            page.wait_for_timeout(300)  # the answer read and shown

        list_again()
        assert greed.evaluate("b => b.isConnected"), (
            "the same games listed again replaced the button"
        )
        r = httpx.post(
            f"{server.url}/api/v1/turns", json={"player": "kim", "game": "farkle-five"}, timeout=30
        )
        assert r.status_code == 201, r.text
        list_again()
        expect(buttons).to_have_count(3)
        assert not greed.evaluate("b => b.isConnected")  # a new listing, built afresh
        buttons.filter(has_text="greed").click()
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
        expect(page.locator("#message")).to_contain_text("Resumed kim's turn")
        expect(buttons).to_have_count(2)  # less the one on the page
    finally:
        server.__exit__(None, None, None)


def test_a_listing_answered_after_a_later_one_is_not_shown(chromium, tmp_path):
    """Two listings of the open games on their way (the page loading, the name typed, a game
    started): the answer to the earlier one, come late, does not replace the later one's."""
    from playwright.sync_api import expect

    server = service(tmp_path)
    try:
        r = httpx.post(
            f"{server.url}/api/v1/turns", json={"player": "kim", "game": "greed"}, timeout=30
        )
        assert r.status_code == 201, r.text
        page = open_page(chromium, server)
        held = []  # the first listing's answer, held back until the second one is shown
        page.route(
            "**/api/v1/open-games*",
            lambda route: held.append((route, route.fetch())) if not held else route.continue_(),
        )
        page.fill("#player", "kim")
        page.dispatch_event("#player", "change")
        wait_on_page(page, lambda: held, "the open games listed when the name was typed")
        r = httpx.post(
            f"{server.url}/api/v1/turns", json={"player": "kim", "game": "farkle-five"}, timeout=30
        )
        assert r.status_code == 201, r.text
        page.dispatch_event("#player", "change")
        buttons = page.locator("#open-games-list button")
        expect(buttons).to_have_count(2)
        route, answer = held[0]
        with page.expect_response(lambda r: "/api/v1/open-games" in r.url):
            route.fulfill(response=answer)  # the earlier answer: greed alone
        page.wait_for_timeout(300)  # read, and dropped
        expect(buttons).to_have_count(2)
    finally:
        server.__exit__(None, None, None)


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
