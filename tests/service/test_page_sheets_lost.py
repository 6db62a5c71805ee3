"""Solitaire Dice sheets and Low-High turns when a move's answer is lost on the way back, in
Debian's chromium (Playwright): the move reached the service, the page only saw the connection
drop. Tapped again, the page reads the game first, shows it, says the last move reached the
service and does not send it twice (a turn's moves do the same: test_page_resilience). A tab
shown again (visibilitychange) refreshes the player's open games: one finished on another device
drops out of the list, one started there comes in. Played with typed values (no camera)."""

from __future__ import annotations

import pytest

from .test_page_resilience import UNREACHABLE, open_page, service
from .test_page_sheets_resume import held, roll, start

pytestmark = [pytest.mark.browser, pytest.mark.slow]

REACHED = "Your last move reached the dicecam service"


class LostAnswers:
    """Playwright routes on ``page`` for the moves ending in one of ``paths``: each request is
    counted; while ``losing``, it goes to the service but its answer is dropped on the way."""

    def __init__(self, page, *paths: str) -> None:
        self.sent: list[str] = []
        self.losing = False
        for path in paths:
            page.route(f"**{path}?*", self._handle)

    def _handle(self, route) -> None:
        self.sent.append(route.request.url)
        if not self.losing:
            route.continue_()
            return
        route.fetch()  # the service makes the move ...
        route.abort("connectionreset")  # ... and its answer never comes back

    def count(self, path: str) -> int:
        return sum(f"{path}?" in url for url in self.sent)


def lose_answer(page, lost: LostAnswers, action) -> None:
    """Do ``action`` with its answer lost; the page says the service could not be reached."""
    from playwright.sync_api import expect

    page.evaluate("document.getElementById('message').textContent = ''")  # said afresh
    lost.losing = True
    action()
    expect(page.locator("#message")).to_contain_text(UNREACHABLE)
    lost.losing = False


def test_a_sheet_move_whose_answer_was_lost_is_read_back_and_not_sent_twice(chromium, tmp_path):
    from playwright.sync_api import expect

    server = service(tmp_path)
    errors: list[str] = []
    try:
        page = open_page(chromium, server, errors=errors)
        lost = LostAnswers(page, "/rolls", "/split")
        start(page, "solitaire-dice")
        sheet_id = page.evaluate("window.dicecam.sheet.id")

        lose_answer(
            page, lost, lambda: (page.fill("#typed", "1 4 4 4 6"), page.press("#typed", "Enter"))
        )
        expect(page.locator("#turn-state")).to_have_attribute(
            "data-state", "roll"
        )  # as it was shown
        assert held(server, "sheets", sheet_id)["rolls"] == 1  # the service has the roll
        page.press("#typed", "Enter")  # sent again: the sheet is read first, the roll not resent
        expect(page.locator("#message")).to_contain_text(f"{REACHED} (its answer was lost")
        expect(page.locator("#message")).to_contain_text("Roll 1 4 4 4 6: choose a split")
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "split")
        assert lost.count("/rolls") == 1, lost.sent

        name = "Reject 1, combos 8 and 10, score -400 (-400)"
        lose_answer(page, lost, lambda: page.get_by_role("button", name=name).click())
        expect(page.locator("#turn-total")).to_have_text("0")  # as it was shown
        assert held(server, "sheets", sheet_id)["score"] == -400
        page.get_by_role("button", name=name).click()  # again: read back, not "nothing to split"
        expect(page.locator("#message")).to_contain_text(REACHED)
        expect(page.locator("#message")).to_contain_text("Rejected 1, combos 8 and 10: score -400")
        expect(page.locator("#message")).not_to_contain_text("nothing to split")
        expect(page.locator("#turn-total")).to_have_text("-400")
        assert lost.count("/split") == 1, lost.sent

        roll(page, "2 4 4 6 6", "split")  # and the sheet goes on, each move sent once
        name = "Reject 2, combos 8 and 12, score -600 (-200)"
        lose_answer(page, lost, lambda: page.get_by_role("button", name=name).click())
        page.evaluate("document.dispatchEvent(new Event('visibilitychange'))")  # shown again
        expect(page.locator("#message")).to_contain_text(f"{REACHED} (its answer was lost")
        expect(page.locator("#turn-total")).to_have_text("-600")
        sheet = held(server, "sheets", sheet_id)
        assert (sheet["rolls"], sheet["score"], len(sheet["history"])) == (2, -600, 2)
        assert (lost.count("/rolls"), lost.count("/split")) == (2, 2), lost.sent
    finally:
        server.__exit__(None, None, None)
    assert not errors, errors


def test_a_low_high_move_whose_answer_was_lost_is_read_back_and_not_sent_twice(chromium, tmp_path):
    from playwright.sync_api import expect

    server = service(tmp_path)
    errors: list[str] = []
    try:
        page = open_page(chromium, server, errors=errors)
        lost = LostAnswers(page, "/rolls", "/keep", "/end")
        start(page, "low-high")
        turn_id = page.evaluate("window.dicecam.sheet.id")

        typed = "1 1 1 1 2 4 4 4 5 5 5 5 6"
        lose_answer(page, lost, lambda: (page.fill("#typed", typed), page.press("#typed", "Enter")))
        assert held(server, "low-high/turns", turn_id)["rolls"] == 1
        page.press("#typed", "Enter")
        expect(page.locator("#message")).to_contain_text(REACHED)
        expect(page.locator("#message")).to_contain_text("Roll 1 1 1 1 2")
        expect(page.locator("#sheet-moves button")).to_have_count(5)

        keep = page.get_by_role("button", name="Keep 4 4 4, 3 dice")
        lose_answer(page, lost, keep.click)
        expect(keep).to_be_enabled()  # the buttons back, the turn as it was shown
        keep.click()
        expect(page.locator("#message")).to_contain_text(REACHED)
        expect(page.locator("#message")).to_contain_text("Score 3: roll 10 dice, or end the turn")
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "roll-or-end")

        end = page.get_by_role("button", name="End turn")
        lose_answer(page, lost, end.click)
        assert held(server, "low-high/turns", turn_id)["outcome"] == "ended"
        end.click()
        expect(page.locator("#message")).to_have_text(
            f"{REACHED} (its answer was lost on the way). Turn over: score 3."
        )
        turn = held(server, "low-high/turns", turn_id)
        assert (turn["rolls"], turn["score"], turn["outcome"]) == (1, 3, "ended")
        assert [lost.count(p) for p in ("/rolls", "/keep", "/end")] == [1, 1, 1], lost.sent
    finally:
        server.__exit__(None, None, None)
    assert not errors, errors


def test_a_tab_shown_again_refreshes_the_open_games(chromium, tmp_path):
    from playwright.sync_api import expect

    server = service(tmp_path)
    errors: list[str] = []
    phone_context, laptop_context = chromium.new_context(), chromium.new_context()
    try:
        phone = open_page(chromium, server, phone_context, errors)
        start(phone, "low-high")
        roll(phone, "1 1 1 1 2 4 4 4 5 5 5 5 6", "keep")

        laptop = open_page(chromium, server, laptop_context, errors)
        laptop.fill("#player", "jeff")
        laptop.press("#player", "Tab")
        offered = laptop.locator("#open-games-list button")
        expect(offered).to_have_count(1)
        expect(offered.nth(0)).to_contain_text("Resume Low-High turn")

        start(phone, "solitaire-dice")  # a game started on the phone comes in ...
        laptop.evaluate("document.dispatchEvent(new Event('visibilitychange'))")
        expect(offered).to_have_count(2)
        expect(offered.nth(0)).to_contain_text("Resume Solitaire Dice sheet: score 0 after 0 rolls")

        # ... and one finished there drops out
        phone.locator("#open-games-list button", has_text="Resume Low-High turn").click()
        expect(phone.locator("#message")).to_contain_text("Resumed jeff's turn")
        phone.get_by_role("button", name="Keep 4 4 4, 3 dice").click()
        phone.get_by_role("button", name="End turn").click()
        expect(phone.locator("#message")).to_have_text("Turn over: score 3.")
        laptop.evaluate("document.dispatchEvent(new Event('visibilitychange'))")
        expect(offered).to_have_count(1)
        expect(offered.nth(0)).to_contain_text("Resume Solitaire Dice sheet")
    finally:
        phone_context.close()
        laptop_context.close()
        server.__exit__(None, None, None)
    assert not errors, errors
