"""Live mode on the camera page, in Debian's chromium (Playwright), its fake camera fed a video
of six dice: a settled reading while a keep is awaited, or of another number of dice than the
turn has left to roll, is shown and left to the player, never sent as the roll."""

from __future__ import annotations

import pytest

from service.app import create_app
from service.settings import Settings

from dicecam_testing.page import (
    DrawnRoll,
    TruthReader,
    chromium_or_skip,
    open_turn,
    truth_dice,
    wait_on_page,
    write_y4m,
)
from dicecam_testing.servers import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_live_mode_leaves_a_roll_of_the_wrong_size_to_the_player(tmp_path):
    from playwright.sync_api import expect, sync_playwright

    chromium_or_skip()
    sample = DrawnRoll()
    video = write_y4m(sample.image, tmp_path / "roll.y4m")
    reader = TruthReader(sorted(truth_dice(sample), key=lambda d: d.box[0]))
    app = create_app(Settings(data_dir=tmp_path), reader=reader, tracker_app=None, submitter=None)
    with LiveServer(app) as server, sync_playwright() as p:
        browser, page, reads = open_turn(p, server, video)
        rolls: list[str] = []
        page.on("request", lambda r: rolls.append(r.url) if "/rolls?" in r.url else None)
        page.fill("#typed", "1 5 2 3 4 6")
        page.press("#typed", "Enter")
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_keep")
        page.check("#live")  # six dice seen while a keep is awaited: not a roll yet
        expect(page.locator("#settle")).to_contain_text("6 dice · settled", timeout=20_000)
        settled = len(reads)
        wait_on_page(page, lambda: len(reads) >= settled + 2, "two more frames")
        page.uncheck("#live")
        assert len(rolls) == 1, rolls
        page.get_by_role("button", name="Keep 1 5,").click()
        expect(page.locator("#dice-left")).to_have_text("4")
        sent = len(rolls)
        page.click("#retake")  # that reading set aside: the next one settled is a new roll
        page.check("#live")  # the camera still sees the six dice of the first roll
        expect(page.locator("#settle")).to_contain_text("6 dice · settled", timeout=20_000)
        settled = len(reads)
        wait_on_page(page, lambda: len(reads) >= settled + 2, "two more frames")
        page.uncheck("#live")
        assert len(rolls) == sent, rolls  # not sent: the turn has 4 dice to roll
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
        expect(page.locator("#use-roll")).to_be_enabled()  # the player may still use it
        browser.close()
