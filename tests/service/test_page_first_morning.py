"""A player's first morning on the camera page, in Debian's chromium (Playwright), against a
real service with its embedded Morning Roll tracker (SQLite, its clock at midday UTC): the page
says where a new player registers, warns at a new turn that a player not logged in is not
submitted, and a login made during the turn submits that turn when it ends (the turn took the
token of the login, not only turns started after it). Turns are played with typed values."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from service.api.submit import TrackerSubmitter
from service.app import create_app
from service.settings import Settings
from service.tracker import create_app as create_tracker

from dicecam_testing.page import DrawnRoll, TruthReader, truth_dice

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PASSWORD = "hunter2hunter2"  # seed_players'


@pytest.fixture
def service_url(tmp_path: Path, clock, seed_players, serve) -> str:
    """``dicecam serve`` as its first command runs it: the service with its embedded tracker,
    where ann has an account (not yet logged in on the page)."""
    tracker = create_tracker(f"sqlite:///{tmp_path / 'tracker.sqlite3'}", clock=clock)
    seed_players(tracker, ["ann"])
    data = tmp_path / "svc"
    submitter = TrackerSubmitter(data / "outbox", embedded=True)
    app = create_app(Settings(data_dir=data), tracker_app=tracker, submitter=submitter)
    yield serve(app).url
    tracker.state.db.dispose()


def open_page(chromium, url: str, viewport=(390, 844)):
    page = chromium.new_context(viewport={"width": viewport[0], "height": viewport[1]}).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url + "/")
    page.errors = errors
    return page


def tracked(url: str) -> list[int]:
    r = httpx.get(f"{url}/tracker/api/v1/players/ann/turns", timeout=10)
    assert r.status_code == 200, r.text
    return [t["score"] for t in r.json()["turns"]]


def test_a_login_during_the_turn_submits_that_turn(chromium, service_url):
    from playwright.sync_api import expect

    page = open_page(chromium, service_url)
    page.fill("#player", "ann")
    page.click("#new-turn")
    message = page.locator("#message")
    expect(message).to_contain_text("ann: roll 6 dice.")
    expect(message).to_contain_text("Not logged in to the Morning Roll tracker")
    expect(page.locator("#tracker")).to_have_attribute("open", "")
    page.fill("#typed", "1 1 1 2 3 4")
    page.press("#typed", "Enter")
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_keep")

    page.fill("#password", PASSWORD)  # the tracker section the warning opened
    page.press("#password", "Enter")
    expect(page.locator("#tracker-note")).to_contain_text("Logged in as ann")
    page.get_by_role("button", name="Keep 1 1 1,").click()
    page.click("#bank")
    expect(message).to_contain_text("Banked 1000 points.")
    expect(message).to_contain_text("Sent to the tracker: 1000 points recorded for ann")
    assert tracked(service_url) == [1000]

    page.click("#new-turn")  # logged in now: no warning
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
    expect(message).not_to_contain_text("Not logged in")
    assert page.errors == []


def test_a_turn_ended_before_logging_in_says_how_to_add_it(chromium, service_url):
    from playwright.sync_api import expect

    page = open_page(chromium, service_url)
    page.fill("#player", "ann")
    page.click("#new-turn")
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
    page.fill("#typed", "2 2 3 3 4 6")  # a bust: nothing scores
    page.press("#typed", "Enter")
    message = page.locator("#message")
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "bust")
    expect(message).to_contain_text("not logged in to the tracker when the turn ended")
    expect(message).to_contain_text("Add roll page")
    assert tracked(service_url) == []


def test_a_new_player_finds_where_to_register_and_sees_their_login_after_a_reload(
    chromium, service_url
):
    from playwright.sync_api import expect

    page = open_page(chromium, service_url)
    page.fill("#player", "ann")
    page.click("#tracker summary")
    link = page.get_by_role("link", name="Register on the tracker")
    expect(link).to_be_visible()
    with page.context.expect_page() as opened:
        link.click()
    form = opened.value
    form.wait_for_load_state()
    assert form.url == f"{service_url}/tracker/register"
    expect(form.get_by_role("heading", name="Register")).to_be_visible()
    form.close()

    page.fill("#password", PASSWORD)
    page.press("#password", "Enter")
    expect(page.locator("#tracker-note")).to_contain_text("Logged in as ann")
    page.reload()
    page.click("#tracker summary")
    expect(page.locator("#player")).to_have_value("ann")
    expect(page.locator("#tracker-note")).to_contain_text("Logged in as ann")
    page.fill("#player", "bob")  # another player on this phone: not logged in
    page.press("#player", "Tab")
    expect(page.locator("#tracker-note")).to_have_text(
        "Log in once to submit finished Morning Roll turns."
    )
    assert page.errors == []


def test_without_a_tracker_the_page_offers_no_registration(chromium, tmp_path, serve):
    from playwright.sync_api import expect

    app = create_app(Settings(data_dir=tmp_path), tracker_app=None, submitter=None)
    page = open_page(chromium, serve(app).url)
    expect(page.locator("#reader-model")).to_be_visible()  # /api/v1/health answered
    page.click("#tracker summary")
    expect(page.locator("#tracker-register")).to_be_hidden()
    page.fill("#player", "ann")
    page.click("#new-turn")
    expect(page.locator("#message")).to_have_text("ann: roll 6 dice.")
    page.fill("#password", "secret")
    page.press("#password", "Enter")  # a login, with no tracker to log in to: said so
    expect(page.locator("#tracker-note")).to_have_text(
        "No tracker to submit to (dicecam serve --no-tracker, and no --tracker-url)."
    )


def test_the_reading_note_follows_the_players_corrections(chromium, tmp_path, serve):
    """A die set off the table by a tap (or set back, or removed as not a die) is said in the
    reading's words too, not only drawn: before, the note kept the reader's words."""
    from playwright.sync_api import expect

    sample = DrawnRoll()  # 5 3 1 2 1 2, left to right
    reader = TruthReader(sorted(truth_dice(sample), key=lambda d: d.box[0]))
    app = create_app(Settings(data_dir=tmp_path), reader=reader, tracker_app=None, submitter=None)
    page = open_page(chromium, serve(app).url)
    page.fill("#player", "ann")
    page.click("#new-turn")
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
    page.set_input_files(
        "#file", files=[{"name": "roll.jpg", "mimeType": "image/jpeg", "buffer": sample.jpeg}]
    )
    note = page.locator("#reading-note")
    expect(note).to_contain_text("6 dice: 5 3 1 2 1 2")
    expect(note).not_to_contain_text("off the table")

    def pick(die: int, choice: str) -> None:
        page.locator("#dice .die").nth(die).click()
        page.click(f"#picker button[value='{choice}']")

    pick(2, "off")
    expect(note).to_contain_text("6 dice: 5 3 2 1 2 · 1 off the table (1): using this roll busts")
    pick(2, "table")  # a wrong tap undone
    expect(note).to_contain_text("6 dice: 5 3 1 2 1 2")
    expect(note).not_to_contain_text("off the table")
    pick(5, "remove")
    expect(note).to_contain_text("5 dice: 5 3 1 2 1")
    page.click("#use-roll")
    # 5 of the 6 dice: refused, said, and the photo with its corrections stays to fix
    expect(page.locator("#message")).to_contain_text("this roll should have 6 dice")
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
    expect(note).to_contain_text("5 dice: 5 3 1 2 1")
    expect(page.locator("#use-roll")).to_be_enabled()
    page.fill("#typed", "2 2 3 3 4 6")  # a bust: the turn is over
    page.press("#typed", "Enter")
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "bust")
    pick(0, "off")  # a roll now is only scored: there is no turn left to bust
    expect(note).to_contain_text("1 off the table (5)")
    expect(note).not_to_contain_text("busts")
    assert page.errors == []
