"""What a player hears and where the focus lands on the camera page (Debian's chromium,
Playwright, a real service): the message is a status region whose text and colour are those of
the latest news only (a bust's red does not stay on the next turn's words), and after a move
the focus goes to the first control that can take it (the best keep, not a disabled Bank, not
a button that is hidden)."""

from __future__ import annotations

import pytest

from service.app import create_app
from service.settings import Settings

from dicecam_testing.page import TruthReader
from dicecam_testing.servers import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RED = "rgb(220, 38, 38)"  # --bad: the colour of a bust


def focused(page) -> str:
    return page.evaluate(
        "() => { const e = document.activeElement; return e.id || e.getAttribute('aria-label')"
        " || e.textContent.trim(); }"
    )


def message(page) -> tuple[str, str, str, str]:
    """The message's role, text, class and colour."""
    return tuple(
        page.evaluate(
            "() => { const m = document.getElementById('message');"
            " return [m.getAttribute('role'), m.textContent, m.className, getComputedStyle(m).color]; }"
        )
    )


def start(page, url: str, game: str) -> None:
    from playwright.sync_api import expect

    page.goto(url + "/")
    expect(page.locator("#game option")).to_have_count(5)
    page.select_option("#game", game)
    page.fill("#player", "ada")
    page.click("#new-turn")
    expect(page.locator("#message")).to_have_text(
        "ada: roll five dice." if game == "solitaire-dice" else "ada: roll 5 dice."
    )


def typed(page, values: str) -> None:
    page.fill("#typed", values)
    page.press("#typed", "Enter")


@pytest.fixture
def url(tmp_path):
    app = create_app(
        Settings(data_dir=tmp_path), reader=TruthReader([]), tracker_app=None, submitter=None
    )
    with LiveServer(app) as server:
        yield server.url


def test_a_bust_is_said_in_red_and_the_next_turn_is_not_and_the_focus_follows(chromium, url):
    from playwright.sync_api import expect

    page = chromium.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    start(page, url, "farkle-five")
    role, text, kind, colour = message(page)
    assert (role, kind) == ("status", "") and colour != RED
    assert focused(page) == "pick-photo"  # no camera: Photo… takes the roll

    typed(page, "2 2 3 4 6")  # nothing scores
    expect(page.locator("#message")).to_have_class("bust")
    role, text, kind, colour = message(page)
    assert (role, kind, colour) == ("status", "bust", RED)
    assert text.startswith("Bust: no scoring dice in 2 2 3 4 6. The turn scores 0."), text

    page.click("#new-turn")
    expect(page.locator("#message")).to_have_text("ada: roll 5 dice.")
    assert message(page) == ("status", "ada: roll 5 dice.", "", message(page)[3])
    assert message(page)[3] != RED  # the bust's red is gone with its words

    typed(page, "5 2 2 3 6")  # one keep: 5 (50)
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_keep")
    page.get_by_role("button", name="Keep 5,").click()  # 50: not to be banked (F2, F7)
    expect(page.locator("#turn-total")).to_have_text("50")
    expect(page.locator("#bank")).to_be_disabled()
    # the disabled Bank cannot take the focus: it goes on to the roll's control
    page.wait_for_function("() => document.activeElement.id === 'pick-photo'", timeout=10_000)
    assert message(page)[2] == ""
    assert not errors, errors


def test_after_a_roll_the_first_keep_has_the_focus_not_a_later_one(chromium, url):
    from playwright.sync_api import expect

    page = chromium.new_page()
    page.goto(url + "/")
    page.fill("#player", "ada")
    page.click("#new-turn")
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
    typed(page, "1 5 2 3 4 6")
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_keep")
    keeps = page.locator("#keeps li button")
    assert keeps.count() > 1
    assert keeps.first.evaluate("b => b === document.activeElement"), focused(page)


def test_a_sheet_shows_no_end_turn_where_its_game_has_none(chromium, url):
    from playwright.sync_api import expect

    page = chromium.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    start(page, url, "solitaire-dice")
    end = page.locator("#sheet-end")
    expect(end).to_be_hidden()  # Solitaire Dice has no End turn, hidden or shown
    typed(page, "1 2 3 4 5")
    expect(page.locator("#sheet-moves button")).to_have_count(15)
    expect(end).to_be_hidden()
    first = page.locator("#sheet-moves button").first
    assert first.evaluate("b => b === document.activeElement"), focused(page)
    assert not errors, errors


def test_the_live_camera_view_is_not_covered_by_the_hidden_photo(tmp_path):
    from playwright.sync_api import sync_playwright

    from dicecam_testing.page import DrawnRoll, chromium_or_skip, launch, write_y4m

    chromium_or_skip()
    video = write_y4m(DrawnRoll().image, tmp_path / "roll.y4m")
    app = create_app(
        Settings(data_dir=tmp_path), reader=TruthReader([]), tracker_app=None, submitter=None
    )
    on_top = (
        "() => { const r = document.getElementById('stage').getBoundingClientRect();"
        " return document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2).id; }"
    )
    with LiveServer(app) as server, sync_playwright() as p:
        browser = launch(p, video)
        page = browser.new_page()
        page.goto(server.url + "/")
        page.click("#start-camera")
        page.wait_for_function("() => document.getElementById('preview').videoWidth > 0")
        assert page.evaluate("document.getElementById('photo').hidden")
        assert page.evaluate(on_top) == "preview"  # the player sees the camera, not black
        assert page.evaluate("document.getElementById('photo').getClientRects().length") == 0
        browser.close()
