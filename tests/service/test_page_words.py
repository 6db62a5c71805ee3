"""The words the camera page shows a player, in Debian's chromium (Playwright), against a real
service (no tracker): the State field says what the game waits for in words ("Choose the dice
to keep", "Roll the 5 dice left, or bank"), never the service's names of it ("awaiting_keep"),
which stay in its ``data-state`` for tests and scripts. Played with typed values."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from service.app import create_app
from service.settings import Settings

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def page(chromium, tmp_path: Path, serve):
    app = create_app(Settings(data_dir=tmp_path), tracker_app=None, submitter=None)
    url = serve(app).url
    page = chromium.new_context(viewport={"width": 390, "height": 844}).new_page()
    page.goto(url + "/")
    return page


def roll(page, values: str) -> None:
    page.fill("#typed", values)
    page.click("#typed-form button")


def test_the_state_field_says_what_the_game_waits_for_in_a_players_words(page):
    from playwright.sync_api import expect

    state = page.locator("#turn-state")

    def shows(code: str, words: str) -> None:
        expect(state).to_have_attribute("data-state", code)
        expect(state).to_have_text(words)

    shows("no turn", "No turn: press New turn")
    page.fill("#player", "ann")
    page.click("#new-turn")
    shows("awaiting_roll", "Roll 6 dice")
    roll(page, "1 2 3 4 6 6")
    shows("awaiting_keep", "Choose the dice to keep")
    page.locator("#keeps button", has_text="Keep 1").first.click()
    shows("awaiting_roll", "Roll the 5 dice left, or bank")
    roll(page, "2 2 3 4 6")
    shows("bust", "Bust: turn over, 0 points")

    page.click("#new-turn")
    shows("awaiting_roll", "Roll 6 dice")
    roll(page, "1 1 1 2 3 4")
    page.locator("#keeps button", has_text="Keep 1 1 1").first.click()
    shows("awaiting_roll", "Roll the 3 dice left, or bank")
    page.click("#bank")
    shows("banked", "Turn over: 1000 points")
    roll(page, "2 2 3 3 4 6")  # the turn is over: the roll is only scored
    shows("scored", "Roll scored, no turn")

    page.select_option("#game", "solitaire-dice")
    page.click("#new-turn")
    shows("roll", "Roll five dice")
    roll(page, "1 2 3 4 5")
    shows("split", "Choose a split")

    page.select_option("#game", "low-high")
    page.click("#new-turn")
    shows("roll", "Roll 13 dice")
    page.select_option("#game", "greed")  # no turn of this game: the sheet is set aside
    shows("no turn", "No turn: press New turn")


def test_a_turn_the_tracker_did_not_get_is_said_saved_and_how_it_is_sent(
    chromium, tmp_path: Path, unused_port, serve
):
    # The receipt said "Tracker: queued — ... (cannot reach ...; kept in the outbox (/a/folder):
    # ... `dicecam outbox deliver` ...)": a status name, a folder and a command. The player reads
    # that the turn is saved and how it gets to the tracker; the rest is folded under Details.
    # A service that does not retry on its own (DICECAM_OUTBOX_RETRY_S=0) does not promise it.
    from playwright.sync_api import expect

    data = tmp_path / "svc"
    tracker_url = f"http://127.0.0.1:{unused_port}"  # nothing listens there
    app = create_app(Settings(data_dir=data, tracker_url=tracker_url, outbox_retry_s=0))
    page = chromium.new_context().new_page()
    page.goto(serve(app).url + "/")
    page.fill("#player", "ann")
    page.evaluate("localStorage.setItem('dicecam.token.ann', 'a-token')")
    page.click("#new-turn")
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
    roll(page, "2 2 3 4 6 6")  # a bust: the turn is over and handed to the tracker
    message, details = page.locator("#message"), page.locator("#receipt-details")
    expect(message).to_contain_text(
        "Not sent yet: the tracker cannot be reached now. The turn is saved by the dicecam "
        "service: ask whoever runs the service to send it to the tracker."
    )
    for word in ("queued", "outbox", str(data), "Tracker:"):
        expect(message).not_to_contain_text(word)
    expect(details).to_be_visible()
    expect(details.locator("#receipt-detail")).to_be_hidden()  # folded until opened
    details.locator("summary").click()
    expect(details).to_contain_text(f"cannot reach the tracker at {tracker_url}")
    expect(details).to_contain_text(f"kept in the outbox ({data / 'outbox'})")
    expect(details).to_contain_text("`dicecam outbox deliver` sends it at once")

    page.click("#new-turn")  # a new turn's message has no receipt, nor its details
    expect(message).to_contain_text("ann: roll 6 dice.")
    expect(details).to_be_hidden()


def test_the_games_are_named_as_their_rules_name_them(page):
    # The game menu, the scored roll and the open games listed showed the service's names of the
    # games ("morning-roll", "Resume solitaire-dice sheet"); the menu's values stay those names.
    from playwright.sync_api import expect

    options = page.locator("#game option")
    expect(options).to_have_text(
        ["Morning Roll", "Five-dice Farkle", "Greed", "Solitaire Dice", "Low-High"]
    )
    assert options.evaluate_all("os => os.map((o) => o.value)") == [
        "morning-roll",
        "farkle-five",
        "greed",
        "solitaire-dice",
        "low-high",
    ]
    page.select_option("#game", "greed")
    roll(page, "1 1 1 2 3")  # no turn started: the roll is only scored
    expect(page.locator("#message")).to_have_text("Greed: 1 1 1 2 3")
    page.fill("#player", "ann")
    page.select_option("#game", "solitaire-dice")
    page.click("#new-turn")
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "roll")
    page.select_option("#game", "morning-roll")
    page.click("#new-turn")
    expect(page.locator("#open-games-list button")).to_have_text(
        re.compile(r"^Resume Solitaire Dice sheet: score 0 after 0 rolls")
    )


def test_the_games_names_come_from_the_service(chromium, tmp_path: Path, serve):
    """GET /api/v1/games gives each game's name (scoring.games.GAME_TITLES, one place); the page
    says the names it gives, its own list only when the service did not answer."""
    import httpx
    from playwright.sync_api import expect

    from scoring.games import GAME_NAMES, GAME_TITLES

    url = serve(create_app(Settings(data_dir=tmp_path), tracker_app=None, submitter=None)).url
    titles = httpx.get(url + "/api/v1/games", timeout=30).json()["game_titles"]
    assert titles == GAME_TITLES and list(titles) == list(GAME_NAMES)

    def renamed(route) -> None:  # as a service whose scoring names Greed otherwise would
        games = route.fetch().json()
        games["game_titles"]["greed"] = "Greed (10,000 to win)"
        route.fulfill(json=games)

    page = chromium.new_context(viewport={"width": 390, "height": 844}).new_page()
    page.route("**/api/v1/games", renamed)
    page.goto(url + "/")
    expect(page.locator("#game option[value=greed]")).to_have_text("Greed (10,000 to win)")
    page.select_option("#game", "greed")
    roll(page, "1 1 1 2 3")  # no turn started: the roll is only scored
    expect(page.locator("#message")).to_have_text("Greed (10,000 to win): 1 1 1 2 3")

    offline = chromium.new_context(viewport={"width": 390, "height": 844}).new_page()
    offline.route("**/api/v1/games", lambda route: route.abort())
    offline.goto(url + "/")
    expect(offline.locator("#game option[value=greed]")).to_have_text("Greed")  # the page's own


def test_a_roll_that_may_not_be_banked_says_why_and_leaves_bank_off(page):
    """A kept straight of Morning Roll forces a re-roll of all six dice, and a Farkle Five total
    ending in 50 cannot be banked: the page says so, and Bank stays off."""
    from playwright.sync_api import expect

    message = page.locator("#message")
    page.fill("#player", "ann")
    page.click("#new-turn")
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
    roll(page, "6 5 4 3 2 1")
    page.locator("#keeps button", has_text="forced re-roll").first.click()
    expect(message).to_have_text("Forced re-roll: roll all 6 dice (banking is not allowed now).")
    expect(page.locator("#turn-total")).to_have_text("2500")
    expect(page.locator("#bank")).to_be_disabled()

    page.select_option("#game", "farkle-five")
    page.click("#new-turn")
    expect(message).to_have_text("ann: roll 5 dice.")
    roll(page, "5 2 2 3 6")
    page.get_by_role("button", name="Keep 5,").click()
    expect(message).to_have_text("Roll again: 50 cannot be banked. Roll 4 dice.")
    expect(page.locator("#bank")).to_be_disabled()
