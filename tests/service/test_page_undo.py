"""The camera page's "Take back keep", in Debian's chromium (Playwright) against a real service:
shown only while the last move is a keep and the turn awaits a roll, it works by keyboard, says
what was taken back, brings the keep buttons of the same roll back, and is gone after a roll."""

from __future__ import annotations

import pytest

from service.app import create_app
from service.settings import Settings

from dicecam_testing.page import kept_on_a_phone

pytestmark = pytest.mark.browser


def test_a_mis_tapped_keep_is_taken_back_and_the_button_goes_after_a_roll(
    chromium, tmp_path, serve
):
    from playwright.sync_api import expect

    app = create_app(Settings(data_dir=tmp_path), tracker_app=None, submitter=None)
    page = chromium.new_context(viewport={"width": 390, "height": 844}).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(serve(app).url + "/")
    take_back = page.get_by_role("button", name="Take back keep")
    keeps = page.locator("#keeps button")
    message = page.locator("#message")

    page.fill("#player", "ann")
    page.click("#new-turn")
    expect(message).to_contain_text("ann: roll 6 dice")
    expect(take_back).to_be_hidden()
    page.fill("#typed", "1 1 5 2 3 4")
    page.press("#typed", "Enter")
    expect(page.get_by_role("button", name="Keep 1 1 5,")).to_be_visible()
    offered = keeps.all_inner_texts()
    expect(take_back).to_be_hidden()  # a roll is never taken back

    page.get_by_role("button", name="Keep 1 1 5,").click()  # meant 1 1
    expect(page.locator("#turn-total")).to_have_text("250")
    expect(keeps).to_have_count(0)
    expect(take_back).to_be_visible()
    expect(take_back).to_have_text("Take back keep 1 1 5")

    take_back.focus()
    page.keyboard.press("Enter")
    expect(message).to_contain_text("Took back the keep of 1 1 5 (250 points)")
    expect(message).to_contain_text("Choose what to keep")
    expect(page.locator("#turn-total")).to_have_text("0")
    expect(page.locator("#dice-left")).to_have_text("6")
    expect(take_back).to_be_hidden()
    assert keeps.all_inner_texts() == offered  # the same keeps, advice and order
    expect(keeps.first).to_be_focused()  # the keyboard goes on from the keeps

    page.get_by_role("button", name="Keep 1 1,").click()
    expect(page.locator("#turn-total")).to_have_text("200")
    expect(take_back).to_have_text("Take back keep 1 1")
    page.fill("#typed", "1 3 4 6")
    page.press("#typed", "Enter")
    expect(page.get_by_role("button", name="Keep 1,")).to_be_visible()
    expect(take_back).to_be_hidden()  # a roll came after the keep: it stands
    assert errors == []


def test_a_score_sheet_shows_no_take_back(chromium, tmp_path, serve):
    from playwright.sync_api import expect

    app = create_app(Settings(data_dir=tmp_path), tracker_app=None, submitter=None)
    page, take_back = kept_on_a_phone(chromium, serve(app).url)
    page.select_option("#game", "solitaire-dice")  # another player's sheet: no keep to take back
    page.fill("#player", "bo")
    page.click("#new-turn")
    expect(page.locator("#sheet")).to_be_visible()
    expect(take_back).to_be_hidden()
