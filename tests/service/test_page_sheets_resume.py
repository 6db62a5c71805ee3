"""Solitaire Dice sheets and Low-High turns outlive the camera page, in Debian's chromium
(Playwright): a reload or a service restart on the same data folder resumes the open one as a
turn is resumed, ready for the next move; another device (a second browser context) lists the
player's open games, resumes one and plays on; a tab left behind is refused (409) and shown the
game as it is; a finished game is not offered. Played with typed values (no camera)."""

from __future__ import annotations

import httpx
import pytest

from .test_page_resilience import open_page, service

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def start(page, game: str, player: str = "jeff") -> None:
    from playwright.sync_api import expect

    page.fill("#player", player)
    page.select_option("#game", game)
    page.click("#new-turn")
    expect(page.locator("#message")).to_contain_text(f"{player}: roll")


def roll(page, values: str, awaiting: str) -> None:
    from playwright.sync_api import expect

    page.fill("#typed", values)
    page.press("#typed", "Enter")
    expect(page.locator("#turn-state")).to_have_attribute("data-state", awaiting)


def split(page, name: str, total: int) -> None:
    from playwright.sync_api import expect

    page.get_by_role("button", name=name).click()
    expect(page.locator("#turn-total")).to_have_text(str(total))


def held(server, route: str, game_id: str) -> dict:
    return httpx.get(f"{server.url}/api/v1/{route}/{game_id}", timeout=10).json()


def test_a_reload_and_a_service_restart_resume_the_open_sheet(chromium, tmp_path, unused_port):
    from playwright.sync_api import expect

    # the port is held for the test: the restart below gets it back, no other test process
    server = service(tmp_path, port=unused_port)
    errors: list[str] = []
    try:
        page = open_page(chromium, server, errors=errors)
        start(page, "solitaire-dice")
        sheet_id = page.evaluate("window.dicecam.sheet.id")
        roll(page, "1 4 4 4 6", "split")
        page.reload()  # after a roll: the same sheet, its splits ready
        expect(page.locator("#message")).to_contain_text("Resumed jeff's sheet. Roll 1 4 4 4 6")
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "split")
        assert page.evaluate("window.dicecam.sheet.id") == sheet_id
        split(page, "Reject 1, combos 8 and 10, score -400 (-400)", -400)
    finally:
        server.__exit__(None, None, None)
    server = service(tmp_path, port=server.port)  # restarted on the same data folder
    try:
        page.reload()
        expect(page.locator("#message")).to_contain_text("Resumed jeff's sheet. Rejected 1")
        expect(page.locator("#turn-total")).to_have_text("-400")
        expect(page.locator("#sheet-table")).to_contain_text("1×1")
        roll(page, "2 4 4 6 6", "split")  # the next roll goes on the same sheet
        split(page, "Reject 2, combos 8 and 12, score -600 (-200)", -600)
        sheet = held(server, "sheets", sheet_id)
        assert (sheet["rolls"], sheet["score"], sheet["rejects"]["2"]) == (2, -600, 1)
    finally:
        server.__exit__(None, None, None)
    assert not errors, errors


def test_a_reload_resumes_an_open_low_high_turn_and_forgets_a_finished_one(chromium, tmp_path):
    from playwright.sync_api import expect

    server = service(tmp_path)
    errors: list[str] = []
    try:
        page = open_page(chromium, server, errors=errors)
        start(page, "low-high")
        turn_id = page.evaluate("window.dicecam.sheet.id")
        roll(page, "1 1 1 1 2 4 4 4 5 5 5 5 6", "keep")
        page.reload()
        expect(page.locator("#message")).to_contain_text("Resumed jeff's turn. Roll 1 1 1 1 2")
        expect(page.locator("#sheet-moves button")).to_have_count(5)
        page.get_by_role("button", name="Keep 4 4 4, 3 dice").click()
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "roll-or-end")
        page.reload()  # after a keep: ready to roll the 10 dice left, or to end
        expect(page.locator("#message")).to_contain_text("Resumed jeff's turn. Score 3: roll 10")
        expect(page.get_by_role("button", name="End turn")).to_be_enabled()
        roll(page, "1 2 3 4 5 5 6 6 6 6", "keep")
        page.get_by_role("button", name="Keep 6 6 6 6, 4 dice").click()
        page.get_by_role("button", name="End turn").click()
        expect(page.locator("#message")).to_have_text("Turn over: score 3.")
        assert held(server, "low-high/turns", turn_id)["outcome"] == "ended"
        page.reload()  # finished: nothing to resume, nothing offered
        expect(page.locator("#game")).to_have_value("low-high")
        page.wait_for_load_state("networkidle")
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "no turn")
        expect(page.locator("#message")).not_to_contain_text("Resumed")
        expect(page.locator("#open-games")).to_be_hidden()
    finally:
        server.__exit__(None, None, None)
    assert not errors, errors


def test_another_device_lists_the_open_games_and_resumes_them(chromium, tmp_path):
    from playwright.sync_api import expect

    server = service(tmp_path)
    errors: list[str] = []
    phone_context, laptop_context = chromium.new_context(), chromium.new_context()
    try:
        phone = open_page(chromium, server, phone_context, errors)
        start(phone, "low-high")
        roll(phone, "1 1 1 1 2 4 4 4 5 5 5 5 6", "keep")
        phone.get_by_role("button", name="Keep 4 4 4, 3 dice").click()
        expect(phone.locator("#turn-state")).to_have_attribute("data-state", "roll-or-end")
        start(phone, "solitaire-dice")
        sheet_id = phone.evaluate("window.dicecam.sheet.id")
        roll(phone, "1 4 4 4 6", "split")

        laptop = open_page(chromium, server, laptop_context, errors)  # nothing remembered here
        laptop.fill("#player", "Jeff")
        laptop.press("#player", "Tab")
        offered = laptop.locator("#open-games-list button")
        expect(offered).to_have_count(2)
        expect(offered.nth(0)).to_contain_text("Resume Solitaire Dice sheet: score 0 after 1 roll")
        expect(offered.nth(1)).to_contain_text(
            "Resume Low-High turn: score 3 after 1 roll, 10 dice to roll"
        )
        offered.nth(0).click()
        expect(laptop.locator("#game")).to_have_value("solitaire-dice")
        expect(laptop.locator("#message")).to_contain_text("Resumed Jeff's sheet. Roll 1 4 4 4 6")
        expect(offered).to_have_count(1)  # the one on screen is not listed
        split(laptop, "Reject 1, combos 8 and 10, score -400 (-400)", -400)
        roll(laptop, "2 4 4 6 6", "split")

        # the phone still shows the first roll: its split is refused, and it shows the sheet now
        phone.get_by_role("button", name="Reject 6, combos 5 and 8").click()
        expect(phone.locator("#message")).to_contain_text("moved on elsewhere")
        expect(phone.locator("#turn-total")).to_have_text("-400")
        expect(phone.locator("#sheet-moves button").first).to_contain_text("Reject 2")
        split(phone, "Reject 2, combos 8 and 12, score -600 (-200)", -600)
        # back to the laptop's tab: it reads the sheet and says so
        laptop.evaluate("document.dispatchEvent(new Event('visibilitychange'))")
        expect(laptop.locator("#message")).to_contain_text("The sheet moved on elsewhere")
        expect(laptop.locator("#turn-total")).to_have_text("-600")
        sheet = held(server, "sheets", sheet_id)
        assert (sheet["rolls"], sheet["score"]) == (2, -600)

        # New turn over the phone's open Low-High turn offers it; resumed, it ends here
        laptop.select_option("#game", "low-high")
        laptop.click("#new-turn")
        expect(laptop.locator("#open-turn")).to_contain_text(
            "Jeff already has a Low-High turn open today: score 3 after 1 roll, 10 dice to roll"
        )
        laptop.click("#resume-turn")
        expect(laptop.locator("#message")).to_contain_text("Resumed Jeff's turn. Score 3")
        laptop.get_by_role("button", name="End turn").click()
        expect(laptop.locator("#message")).to_have_text("Turn over: score 3.")

        phone.reload()  # its sheet is resumed; the finished turn is offered nowhere
        expect(phone.locator("#message")).to_contain_text("Resumed jeff's sheet")
        expect(phone.locator("#turn-total")).to_have_text("-600")
        phone.wait_for_load_state("networkidle")
        expect(phone.locator("#open-games")).to_be_hidden()
        games = httpx.get(f"{server.url}/api/v1/open-games?player=jeff", timeout=10).json()
        assert [g["id"] for g in games["games"]] == [sheet_id]
    finally:
        phone_context.close()
        laptop_context.close()
        server.__exit__(None, None, None)
    assert not errors, errors
