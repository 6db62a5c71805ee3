"""House rules on the camera page (chromium): the chosen game's options of READINGS.md are
shown, remembered per game on the phone, and a new turn and a scored roll are played under
them."""

from __future__ import annotations

import pytest

from service.app import create_app
from service.settings import Settings

from dicecam_testing.page import DrawnRoll, TruthReader, chromium_or_skip, launch, write_y4m
from dicecam_testing.servers import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def keep_texts(page) -> list[str]:
    return page.locator("#keeps li button").all_inner_texts()


def test_a_turn_is_played_under_the_house_rules_ticked_on_the_page(tmp_path):
    from playwright.sync_api import expect, sync_playwright

    chromium_or_skip()
    video = write_y4m(DrawnRoll().image, tmp_path / "roll.y4m")
    app = create_app(
        Settings(data_dir=tmp_path), reader=TruthReader([]), tracker_app=None, submitter=None
    )
    with LiveServer(app) as server, sync_playwright() as p:
        browser = launch(p, video)
        page = browser.new_page(viewport={"width": 412, "height": 915}, is_mobile=True)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(server.url + "/")
        expect(page.locator("#house-rules")).to_be_visible()
        expect(page.locator("#rules-summary")).to_have_text("as written")
        page.fill("#player", "tom")

        def play(values: str) -> list[str]:
            page.click("#new-turn")
            expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
            page.fill("#typed", values)
            page.click("#typed-form button")
            expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_keep")
            return keep_texts(page)

        assert not any("2500 pts" in k for k in play("2 2 2 2 3 3"))  # M4 as written
        page.click("#house-rules summary")
        page.check("#rule-three_pairs_any")
        expect(page.locator("#rules-summary")).to_have_text("Any three pairs are boxcars")
        page.click("#new-turn")
        page.click("#abandon-turn")  # the turn as written is open (a roll in it): asked first
        expect(page.locator("#message")).to_contain_text("house rules: Any three pairs are boxcars")
        keeps = play("2 2 2 2 3 3")
        assert "2500 pts" in keeps[0], keeps  # four of a kind and a pair count as three pairs

        page.reload()  # remembered on this phone, for this game only
        expect(page.locator("#rules-summary")).to_have_text("Any three pairs are boxcars")
        page.select_option("#game", "farkle-five")
        expect(page.locator("#rules-summary")).to_have_text("as written")
        assert page.locator("#rules-list input").count() == 1  # free keep
        page.select_option("#game", "low-high")  # text rules get their choices
        page.click("#house-rules summary")
        menu = page.locator("#rule-scoring option")
        assert menu.all_inner_texts() == ["Dice left, 1 point each", "Pips of the dice left"]
        assert [o.get_attribute("value") for o in menu.all()] == ["dice", "pips"]
        page.select_option("#rule-scoring", "pips")
        expect(page.locator("#rules-summary")).to_have_text("Score by: Pips of the dice left")
        page.select_option("#game", "greed")  # no house rules: nothing to show
        expect(page.locator("#house-rules")).to_be_hidden()

        page.select_option("#game", "morning-roll")  # a roll scored without a turn
        page.click("#new-turn")
        page.select_option("#game", "solitaire-dice")
        page.click("#new-turn")  # no turn for this game: the next rolls are only scored
        page.select_option("#game", "morning-roll")
        page.fill("#typed", "2 2 2 2 3 3")
        page.click("#typed-form button")
        expect(page.locator("#keeps li button").first).to_contain_text("2500 pts")
        assert not errors, errors
        browser.close()
