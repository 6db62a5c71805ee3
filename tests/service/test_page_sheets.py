"""Solitaire Dice and Low-High on the camera page (chromium): with the game chosen, New turn
starts a sheet or a Low-High turn, typed rolls give the legal splits or sets as named buttons,
each choice is announced in the status line, and the sheet ends as the service holds it."""

from __future__ import annotations

import httpx
import pytest

from scoring import SolitaireSheet
from service.app import create_app
from service.settings import Settings

from dicecam_testing.servers import LiveServer
from dicecam_testing.turns import QueueReader

pytestmark = [pytest.mark.browser]


def test_a_solitaire_dice_sheet_and_a_low_high_turn_played_with_typed_values(chromium, tmp_path):
    from playwright.sync_api import expect

    app = create_app(
        Settings(data_dir=tmp_path), reader=QueueReader(), tracker_app=None, submitter=None
    )
    with LiveServer(app) as server:
        page = chromium.new_page(viewport={"width": 412, "height": 915})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(server.url + "/")
        expect(page.locator("#game option[value=solitaire-dice]")).to_have_count(1)
        page.fill("#player", "jeff")
        page.select_option("#game", "solitaire-dice")
        page.click("#new-turn")
        status = page.get_by_role("status").filter(has_text="jeff")
        expect(status).to_have_text("jeff: roll five dice.")
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "roll")

        def roll(values: str) -> None:
            page.fill("#typed", values)
            page.get_by_role("button", name="Roll typed").click()

        mirror = SolitaireSheet()
        for values, name in (
            ("1 4 4 4 6", "Reject 1, combos 8 and 10, score -400 (-400)"),
            ("2 4 4 6 6", "Reject 2, combos 8 and 12, score -600 (-200)"),
            ("1 4 4 6 6", "Reject 1, combos 8 and 12, score -600 (0)"),
        ):
            roll(values)
            dice = [int(v) for v in values.split()]
            moves = page.locator("#sheet-moves button")
            expect(moves).to_have_count(len(mirror.options(dice)))
            expect(page.locator("#message")).to_contain_text(f"Roll {values}: choose a split")
            page.get_by_role("button", name=name).click()
            reject, combos = int(name.split()[1][:-1]), [8, 10 if "10" in name else 12]
            mirror.apply(dice, reject, combos)
            expect(page.locator("#turn-total")).to_have_text(str(mirror.score))
            expect(page.locator("#message")).to_contain_text(
                f"Rejected {reject}, combos 8 and {combos[1]}: score {mirror.score}."
            )
        expect(page.locator("#sheet-table")).to_contain_text("Rejects")
        expect(page.locator("#sheet-table")).to_contain_text("1×2, 2×1")

        roll("1 2 3")  # the wrong count: said, and the typed values are kept to correct
        expect(page.locator("#message")).to_contain_text("this roll should have 5 dice")
        expect(page.locator("#typed")).to_have_value("1 2 3")
        sheet_id = page.evaluate("window.dicecam.sheet.id")
        held = httpx.get(f"{server.url}/api/v1/sheets/{sheet_id}", timeout=30).json()
        assert (held["score"], held["rolls"], held["history"][-1]["combos"]) == (-600, 3, [8, 12])
        assert held["marks"] == {str(k): v for k, v in mirror.marks.items()}

        page.select_option("#game", "low-high")
        page.click("#new-turn")
        expect(page.locator("#message")).to_have_text("jeff: roll 13 dice.")
        expect(page.get_by_role("button", name="End turn")).to_be_disabled()
        roll("1 1 1 1 2 4 4 4 5 5 5 5 6")
        expect(page.locator("#sheet-moves button")).to_have_count(5)
        page.get_by_role("button", name="Keep 4 4 4, 3 dice").click()
        expect(page.locator("#message")).to_have_text("Score 3: roll 10 dice, or end the turn.")
        roll("1 2 3 4 5 5 6 6 6 6")
        expect(page.locator("#message")).to_contain_text("4 bad (1 2 3 4). Keep a set.")
        page.get_by_role("button", name="Keep 6 6 6 6, 4 dice").click()
        page.get_by_role("button", name="End turn").click()
        expect(page.locator("#message")).to_have_text("Turn over: score 3.")  # 7 good, 4 bad
        expect(page.locator("#sheet-table")).to_contain_text("4 4 4 6 6 6 6")
        assert not errors, errors
        page.close()


def test_choosing_another_game_and_back_brings_the_sheet_back(chromium, tmp_path):
    from playwright.sync_api import expect

    app = create_app(Settings(data_dir=tmp_path), tracker_app=None, submitter=None)
    with LiveServer(app) as server:
        page = chromium.new_page(viewport={"width": 412, "height": 915})
        page.goto(server.url + "/")
        page.fill("#player", "jeff")
        page.select_option("#game", "solitaire-dice")
        page.click("#new-turn")
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "roll")
        page.select_option("#game", "greed")  # set aside, not lost
        expect(page.locator("#sheet")).to_be_hidden()
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "no turn")
        page.select_option("#game", "solitaire-dice")
        expect(page.locator("#sheet")).to_be_visible()
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "roll")
        expect(page.locator("#message")).to_have_text("jeff: roll five dice.")
