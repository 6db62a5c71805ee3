"""A finished turn's tracker receipt on the camera page, in Debian's chromium (Playwright),
against a real service: every status the service can give a receipt is said in a player's words,
never as the status ("queued"); one the page has no words for (a newer service's) says what the
player can do, and its status shows only in the folded Details, for whoever runs the service.
Played with typed values (no camera)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from service.app import create_app
from service.settings import Settings

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
GIVERS = ("service/api/submit.py", "service/turn_store.py")
"""Where the service makes a turn's receipt (its ``submission``)."""


def receipt_statuses() -> set[str]:
    """The statuses the service's code gives a receipt: ``"status": "queued"`` and the like."""
    found = set()
    for name in GIVERS:
        found |= set(re.findall(r'"status": "([a-z-]+)"', (ROOT / name).read_text()))
    return found


@pytest.fixture
def page(chromium, tmp_path: Path, serve):
    app = create_app(Settings(data_dir=tmp_path), tracker_app=None, submitter=None)
    page = chromium.new_context(viewport={"width": 390, "height": 844}).new_page()
    page.goto(serve(app).url + "/")
    page.fill("#player", "ann")
    return page


def test_every_status_the_service_gives_a_receipt_is_said_in_words(page):
    statuses = receipt_statuses()
    assert {"submitted", "queued", "rejected", "not-submitted", "failed"} <= statuses
    said = page.evaluate(
        """async (statuses) => {
          const { receiptWords } = await import("/static/words.js");
          const turn = (status) => ({ game: "morning-roll", over: true,
                                      submission: { status, detail: "why" } });
          return Object.fromEntries(statuses.map((s) => [s, receiptWords(turn(s), 0)]));
        }""",
        sorted(statuses),
    )
    for status, (words, _) in said.items():
        assert words.endswith("."), (status, words)
        assert "Tracker:" not in words, (status, words)
        assert "look on the tracker's pages" not in words, (status, words)  # the unknown's
        assert not re.search(rf"\b{status}\b", words), (status, words)


def test_a_receipt_status_the_page_has_no_words_for_is_said_so_its_status_in_the_details(page):
    """It showed "Tracker: held-for-review": the service's name of it, not what to do."""
    from playwright.sync_api import expect

    def newer_service(route) -> None:
        answer = route.fetch()
        view = answer.json()
        if isinstance(view, dict) and view.get("over"):
            view["submission"] = {"status": "held-for-review", "detail": "a judge looks at it"}
        route.fulfill(response=answer, body=json.dumps(view))

    page.route("**/api/v1/turns/*/*", newer_service)
    page.click("#new-turn")
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
    page.fill("#typed", "2 2 3 4 6 6")  # a bust: the turn is over
    page.click("#typed-form button")
    message, details = page.locator("#message"), page.locator("#receipt-details")
    expect(message).to_contain_text(
        "This page cannot tell what became of the turn at the tracker: look on the tracker's "
        "pages, or ask whoever runs the dicecam service (reloading this page may help)."
    )
    for word in ("Tracker:", "held-for-review", "judge"):
        expect(message).not_to_contain_text(word)
    expect(details).to_be_visible()
    details.locator("summary").click()
    expect(details.locator("#receipt-detail")).to_have_text(
        "tracker receipt status: held-for-review; a judge looks at it"
    )


def test_a_turns_details_go_with_its_message_when_the_page_says_something_else(page):
    """The folded Details belong to the receipt said with them: a later message (here, a new
    turn asked for without a name) takes them away, not leaves them under other words."""
    from playwright.sync_api import expect

    def newer_service(route) -> None:
        answer = route.fetch()
        view = answer.json()
        if isinstance(view, dict) and view.get("over"):
            view["submission"] = {"status": "held-for-review", "detail": "a judge looks at it"}
        route.fulfill(response=answer, body=json.dumps(view))

    page.route("**/api/v1/turns/*/*", newer_service)
    page.click("#new-turn")
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
    page.fill("#typed", "2 2 3 4 6 6")  # a bust: the turn is over, its receipt has details
    page.click("#typed-form button")
    details = page.locator("#receipt-details")
    expect(details).to_be_visible()
    page.fill("#player", "   ")  # only spaces: no name
    page.click("#new-turn")
    expect(page.locator("#message")).to_have_text("Type the player's name first.")
    expect(details).to_be_hidden()
