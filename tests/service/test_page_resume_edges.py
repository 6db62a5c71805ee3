"""Resuming on the camera page, in Debian's chromium (Playwright), against a real service: the
open turn is remembered per player whatever the case the name is typed in."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.app import create_app
from service.settings import Settings

from dicecam_testing.page import wait_on_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _rolled_turn(chromium, serve, tmp_path: Path, player: str):
    """A real service's camera page in a new context, with ``player``'s new turn rolled (typed
    ``1 5 2 3 4 6``) and awaiting a keep. Returns the page, the errors it raises (a list that
    grows) and the turn's id."""
    from playwright.sync_api import expect

    app = create_app(Settings(data_dir=tmp_path), tracker_app=None, submitter=None)
    page = chromium.new_context().new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(serve(app).url + "/")
    page.fill("#player", player)
    page.click("#new-turn")
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
    turn_id = page.evaluate("window.dicecam.turn.id")
    page.fill("#typed", "1 5 2 3 4 6")
    page.press("#typed", "Enter")
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_keep")
    return page, errors, turn_id


def test_a_reload_resumes_the_turn_of_the_name_typed_in_another_case(
    chromium, tmp_path: Path, serve
):
    from playwright.sync_api import expect

    page, errors, turn_id = _rolled_turn(chromium, serve, tmp_path, "Heather")
    page.evaluate("localStorage.setItem('dicecam.player', 'heather')")  # typed so next time
    page.reload()
    expect(page.locator("#message")).to_contain_text("Resumed heather's turn")
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_keep")
    assert page.evaluate("window.dicecam.turn.id") == turn_id
    assert not errors, errors


def test_a_reload_while_the_service_is_unreachable_keeps_the_turn_to_resume(
    chromium, tmp_path: Path, serve
):
    """Only a turn the service says it no longer knows (404) is forgotten: one it could not be
    asked about is said remembered, and resumed on the next reload."""
    from playwright.sync_api import expect

    page, errors, turn_id = _rolled_turn(chromium, serve, tmp_path, "ann")

    page.route(f"**/api/v1/turns/{turn_id}", lambda route: route.abort())  # the network drops
    page.reload()
    expect(page.locator("#message")).to_contain_text("ann's open turn is remembered")
    expect(page.locator("#message")).not_to_contain_text("no longer knows")
    page.unroute(f"**/api/v1/turns/{turn_id}")
    page.reload()
    expect(page.locator("#message")).to_contain_text("Resumed ann's turn")
    assert page.evaluate("window.dicecam.turn.id") == turn_id
    assert not errors, errors


def test_new_turn_over_one_not_yet_rolled_starts_it_without_asking(chromium, tmp_path: Path, serve):
    """A turn with no roll in it has nothing to lose: New turn starts another at once."""
    from playwright.sync_api import expect

    app = create_app(Settings(data_dir=tmp_path), tracker_app=None, submitter=None)
    page = chromium.new_context().new_page()
    page.goto(serve(app).url + "/")
    page.fill("#player", "ann")
    page.click("#new-turn")
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
    first = page.evaluate("window.dicecam.turn.id")
    page.click("#new-turn")
    new = "window.dicecam.turn && window.dicecam.turn.id"
    wait_on_page(page, lambda: page.evaluate(new) not in (None, first), "a new turn")
    expect(page.locator("#open-turn")).to_be_hidden()
    expect(page.locator("#message")).to_have_text("ann: roll 6 dice.")
