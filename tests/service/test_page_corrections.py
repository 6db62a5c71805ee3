"""A player's corrections of a reading on the camera page, in Debian's chromium (Playwright),
sent as the roll: a value set on a die marked off the table puts it back on the table, a box
removed as not a die counts for nothing (not even off the table), and a die set off the table
busts the turn with the other dice's values, not its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.app import create_app
from service.settings import Settings

from dicecam_testing.page import DrawnRoll, TruthReader, truth_dice

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_corrections_are_sent_as_the_player_left_the_dice(chromium, tmp_path: Path, serve):
    from playwright.sync_api import expect

    sample = DrawnRoll()  # 5 3 1 2 1 2, left to right
    reader = TruthReader(sorted(truth_dice(sample), key=lambda d: d.box[0]))
    app = create_app(Settings(data_dir=tmp_path), reader=reader, tracker_app=None, submitter=None)
    page = chromium.new_context(viewport={"width": 390, "height": 844}).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(serve(app).url + "/")
    page.fill("#player", "ann")
    page.click("#new-turn")
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
    note = page.locator("#reading-note")
    message = page.locator("#message")

    def read() -> None:
        page.set_input_files(
            "#file", files=[{"name": "roll.jpg", "mimeType": "image/jpeg", "buffer": sample.jpeg}]
        )
        expect(note).to_contain_text("6 dice: 5 3 1 2 1 2")

    def pick(die: int, choice: str) -> None:
        page.locator("#dice .die").nth(die).click()
        page.click(f"#picker button[value='{choice}']")

    read()
    pick(1, "off")
    pick(1, "4")  # a value set: the die is on the table with it
    expect(note).to_contain_text("6 dice: 5 4 1 2 1 2")
    expect(note).not_to_contain_text("off the table")
    expect(page.locator("#dice .die.off")).to_have_count(0)

    pick(5, "off")
    pick(5, "remove")  # not a die after all: 5 dice, none off the table
    expect(note).not_to_contain_text("off the table")
    page.click("#use-roll")
    expect(message).to_contain_text("this roll should have 6 dice")  # refused, not a bust
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")

    read()
    pick(5, "off")
    page.click("#use-roll")  # 5 dice on the table and 1 off: busts at once
    expect(message).to_contain_text("Bust: 1 die left the table")
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "bust")
    assert not errors, errors
