"""What the camera page remembers to resume (localStorage, shared by the tabs of a browser), in
Debian's chromium (Playwright), against a real service: a tab that sees an older turn end, or
learns the service lost it, forgets it only while it is the one remembered, so another tab's
open turn is still resumed on a reload; a sheet the service no longer knows is forgotten; a turn
started while the page's resume lookup was on its way is the one played."""

from __future__ import annotations

import json

import pytest

from .test_page_resilience import open_page, service
from dicecam_testing.page import wait_on_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]

KEY = "dicecam.open.farkle-five.ann"
BUST = "2 3 4 6 6"  # no scoring dice in Five-dice Farkle: the turn is over at once


def new_turn(page, player: str = "ann", game: str = "farkle-five") -> str:
    """A new turn of ``player`` and ``game`` started on ``page`` (none of theirs with a roll
    in it open): its id."""
    from playwright.sync_api import expect

    before = page.evaluate("window.dicecam.turn && window.dicecam.turn.id")
    page.fill("#player", player)
    page.select_option("#game", game)
    page.click("#new-turn")
    shown = "window.dicecam.turn && window.dicecam.turn.id"
    wait_on_page(page, lambda: page.evaluate(shown) not in (None, before), "a new turn")
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
    return page.evaluate(shown)


def typed(page, values: str) -> None:
    page.fill("#typed", values)
    page.press("#typed", "Enter")


def held_routes(page, pattern: str) -> list:
    """Requests to ``pattern`` held on their way (until the test lets them go on)."""
    held: list = []
    page.route(pattern, lambda route: held.append(route))
    return held


def wait_held(page, held: list) -> None:
    wait_on_page(page, lambda: bool(held), "the page's request, held")


def test_an_older_turn_ending_in_another_tab_leaves_this_tabs_turn_remembered(chromium, tmp_path):
    from playwright.sync_api import expect

    server = service(tmp_path)
    errors: list[str] = []
    try:
        context = chromium.new_context()
        a = open_page(chromium, server, context=context, errors=errors)
        old = new_turn(a)
        b = open_page(chromium, server, context=context, errors=errors)  # a second tab
        expect(b.locator("#message")).to_contain_text("Resumed ann's turn")
        assert b.evaluate("window.dicecam.turn.id") == old
        current = new_turn(a)  # nothing rolled on the old one: started at once
        assert a.evaluate(f"localStorage.getItem('{KEY}')") == current

        typed(b, BUST)  # tab B plays on the old turn, which ends
        expect(b.locator("#message")).to_contain_text("Bust")
        assert b.evaluate(f"localStorage.getItem('{KEY}')") == current

        a.reload()
        expect(a.locator("#message")).to_contain_text("Resumed ann's turn")
        assert a.evaluate("window.dicecam.turn.id") == current
    finally:
        server.__exit__(None, None, None)
    assert not errors, errors


@pytest.mark.parametrize("answer", ["over", "gone"])
def test_a_resume_lookup_answered_after_another_tab_started_a_turn_leaves_it_remembered(
    chromium, tmp_path, answer
):
    """Tab B opens while the remembered turn is the old one; its lookup is answered (the turn
    ended, or the service no longer knows it) after tab A started another: A's is kept."""
    from playwright.sync_api import expect

    server = service(tmp_path)
    errors: list[str] = []
    try:
        context = chromium.new_context()
        a = open_page(chromium, server, context=context, errors=errors)
        old = new_turn(a)
        b = context.new_page()
        b.on("pageerror", lambda e: errors.append(str(e)))
        held = held_routes(b, f"**/api/v1/turns/{old}")
        b.goto(server.url + "/")
        wait_held(b, held)  # tab B asks the service about the old turn: held on its way

        typed(a, BUST)  # meanwhile tab A ends the old turn and starts another
        expect(a.locator("#message")).to_contain_text("Bust")
        current = new_turn(a)
        assert a.evaluate(f"localStorage.getItem('{KEY}')") == current

        if answer == "over":
            held[0].continue_()
            expect(b.locator("#message")).to_contain_text("last Five-dice Farkle turn ended")
        else:
            detail = {"detail": f"no turn {old}"}
            held[0].fulfill(status=404, content_type="application/json", body=json.dumps(detail))
            expect(b.locator("#message")).to_contain_text("no longer knows")
        assert b.evaluate(f"localStorage.getItem('{KEY}')") == current

        a.reload()
        expect(a.locator("#message")).to_contain_text("Resumed ann's turn")
        assert a.evaluate("window.dicecam.turn.id") == current
    finally:
        server.__exit__(None, None, None)
    assert not errors, errors


def test_a_sheet_the_service_no_longer_knows_is_forgotten(chromium, tmp_path, unused_port):
    """The service restarted on another data folder: the sheet's next move is refused (404),
    said, and the sheet is not remembered to resume."""
    from playwright.sync_api import expect

    key = "dicecam.open.solitaire-dice.jeff"
    server = service(tmp_path / "before", port=unused_port)
    errors: list[str] = []
    try:
        page = open_page(chromium, server, errors=errors)
        page.fill("#player", "jeff")
        page.select_option("#game", "solitaire-dice")
        page.click("#new-turn")
        expect(page.locator("#message")).to_contain_text("jeff: roll")
        sheet_id = page.evaluate("window.dicecam.sheet.id")
        typed(page, "1 4 4 4 6")
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "split")
        assert page.evaluate(f"localStorage.getItem('{key}')") == sheet_id
    finally:
        server.__exit__(None, None, None)
    server = service(tmp_path / "after", port=server.port)  # it lost the sheet
    try:
        page.get_by_role("button", name="Reject 1").click()
        expect(page.locator("#message")).to_have_attribute("class", "bust")
        expect(page.locator("#message")).to_contain_text(sheet_id)
        assert page.evaluate(f"localStorage.getItem('{key}')") is None

        page.reload()  # nothing to resume, and nothing said about the lost sheet again
        expect(page.locator("#game")).to_have_value("solitaire-dice")
        page.wait_for_load_state("networkidle")
        expect(page.locator("#message")).not_to_contain_text("no longer knows")
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "no turn")
    finally:
        server.__exit__(None, None, None)
    assert not errors, errors


def test_a_turn_started_while_the_resume_lookup_is_on_its_way_is_the_one_shown(chromium, tmp_path):
    """A reload asks the service about the remembered turn; New turn (started anyway over it)
    while that answer is held: the answer, come after, does not replace the new turn."""
    from playwright.sync_api import expect

    server = service(tmp_path)
    errors: list[str] = []
    try:
        page = open_page(chromium, server, errors=errors)
        old = new_turn(page)
        typed(page, "1 2 3 3 6")
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_keep")
        held = held_routes(page, f"**/api/v1/turns/{old}")
        page.reload()
        wait_held(page, held)

        page.click("#new-turn")  # the old turn has a roll in it: offered first
        expect(page.locator("#open-turn")).to_be_visible()
        page.click("#abandon-turn")
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
        current = page.evaluate("window.dicecam.turn.id")
        assert current != old

        # the lookup's answer (the old turn, still open) taken in, then the open games listed
        with page.expect_request("**/api/v1/open-games?**"):
            held[0].continue_()
        assert page.evaluate("window.dicecam.turn.id") == current
        resume = page.locator("#open-games-list button")
        expect(resume).to_contain_text("Resume Five-dice Farkle turn")
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
        expect(page.locator("#message")).not_to_contain_text("Resumed")
        assert page.evaluate(f"localStorage.getItem('{KEY}')") == current
    finally:
        server.__exit__(None, None, None)
    assert not errors, errors
