"""The camera page's tracker receipt, in Debian's chromium (Playwright), against a real service
and a real Morning Roll tracker (on SQLite, its clock at midday): a bank whose receipt the service
could not save shows what the tracker said at once, says that the receipt is not saved here, and
shows the saved receipt once the service has handed the turn over again; each refusal the
tracker client knows (tracker down, token refused, the day's turn already taken) is said in
words and loses nothing. Turns are played with typed values (no camera)."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.api.submit import TrackerSubmitter
from service.app import create_app
from service.settings import Settings
from service.tracker import create_app as create_tracker
from service.turns import TurnSession

from dicecam_testing.sqlite_pragmas import read_only

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PASSWORD = "hunter2hunter2"  # seed_players'


@pytest.fixture
def tracker(tmp_path: Path, clock, seed_players):
    """The Morning Roll tracker the service mounts, with ann's account; its clock at 12:00 UTC."""
    app = create_tracker(f"sqlite:///{tmp_path / 'tracker.sqlite3'}", clock=clock)
    app.state.auth = seed_players(app, ["ann"])["ann"]
    yield app
    app.state.db.dispose()


class UnsavedOnce(TrackerSubmitter):
    """The service's submitter, which leaves the turns' database unwritable (a full disk) once
    the tracker has taken the first turn, until :attr:`unwritable` is closed."""

    unwritable = ExitStack()
    turns: Any = None

    def __call__(self, session: TurnSession) -> dict[str, Any]:
        receipt = super().__call__(session)
        if self.turns is not None:
            self.unwritable.enter_context(read_only(self.turns.database))
            self.turns = None
        return receipt


def open_page(chromium, url: str, token: str | None = None):
    """The camera page with ann's name typed (and ``token`` as her tracker login, if given)."""
    page = chromium.new_context().new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url + "/")
    page.fill("#player", "ann")
    if token:
        page.evaluate("t => localStorage.setItem('dicecam.token.ann', t)", token)
    page.errors = errors
    return page


def log_in(page) -> None:
    from playwright.sync_api import expect

    page.click("#tracker summary")
    page.fill("#password", PASSWORD)
    page.press("#password", "Enter")
    expect(page.locator("#tracker-note")).to_contain_text("Logged in as ann")


def bank_1000(page) -> str:
    """Play ann's turn: three 1s kept, banked (1000). Returns the turn's id."""
    from playwright.sync_api import expect

    page.click("#new-turn")
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
    page.fill("#typed", "1 1 1 2 3 4")
    page.press("#typed", "Enter")
    page.get_by_role("button", name="Keep 1 1 1,").click()
    expect(page.locator("#bank")).to_be_enabled()
    page.click("#bank")
    expect(page.locator("#message")).to_contain_text("Banked 1000 points.")
    return page.evaluate("window.dicecam.turn.id")


def tracked(server_url: str) -> list[int]:
    r = httpx.get(f"{server_url}/tracker/api/v1/players/ann/turns", timeout=10)
    assert r.status_code == 200, r.text
    return [t["score"] for t in r.json()["turns"]]


def service_turn(server_url: str, turn_id: str) -> dict[str, Any]:
    return httpx.get(f"{server_url}/api/v1/turns/{turn_id}", timeout=10).json()


def test_a_bank_whose_receipt_was_not_saved_shows_what_the_tracker_said_then_the_saved_one(
    chromium, tmp_path, tracker, serve
):
    from playwright.sync_api import expect

    data = tmp_path / "svc"
    submitter = UnsavedOnce(data / "outbox", embedded=True)
    settings = Settings(data_dir=data, outbox_retry_s=0.5)
    app = create_app(settings, tracker_app=tracker, submitter=submitter)
    submitter.turns = app.state.turns
    server = serve(app)
    page = open_page(chromium, server.url)
    log_in(page)
    with submitter.unwritable:
        turn_id = bank_1000(page)
        message = page.locator("#message")
        # what the tracker said, at once; and that this receipt is not saved here
        expect(message).to_contain_text("Sent to the tracker: 1000 points recorded for ann on")
        expect(message).to_contain_text("The dicecam service could not save this receipt.")
        expect(message).to_contain_text("its receipt shows here once saved")
        assert tracked(server.url) == [1000]
    # the database takes writes again: the service hands the turn over again, saves the receipt,
    # and the page shows it (the tracker counted the turn once)
    expect(message).not_to_contain_text("could not save this receipt", timeout=20_000)
    expect(message).to_contain_text("Sent to the tracker: 1000 points recorded for ann on")
    assert service_turn(server.url, turn_id)["submission"]["status"] == "submitted"
    assert tracked(server.url) == [1000]
    assert not page.errors, page.errors


def test_a_turn_queued_while_the_tracker_is_down_is_said_and_kept(
    chromium, tmp_path, unused_port, serve
):
    from playwright.sync_api import expect

    data = tmp_path / "svc"
    settings = Settings(data_dir=data, tracker_url=f"http://127.0.0.1:{unused_port}")
    server = serve(create_app(settings))
    page = open_page(chromium, server.url, token="a-token-of-the-remote-tracker")
    turn_id = bank_1000(page)
    message = page.locator("#message")
    expect(message).to_contain_text(
        "Not sent yet: the tracker cannot be reached now. The turn is saved by the dicecam "
        "service: it will be sent to the tracker when the tracker can be reached."
    )
    details = page.locator("#receipt-details")  # the outbox's folder: for whoever runs it
    expect(message).not_to_contain_text("outbox")
    expect(details).to_be_visible()
    expect(details).to_contain_text(f"cannot reach the tracker at http://127.0.0.1:{unused_port}")
    expect(details).to_contain_text(str(data / "outbox"))
    assert service_turn(server.url, turn_id)["submission"]["status"] == "queued"
    assert [p.name for p in (data / "outbox" / "pending").glob("*.json")] == [
        f"dicecam-{turn_id}.json"
    ]
    assert not page.errors, page.errors


def test_a_turn_whose_token_the_tracker_refused_is_sent_once_the_player_logs_in(
    chromium, tmp_path, tracker, serve
):
    from playwright.sync_api import expect

    settings = Settings(data_dir=tmp_path / "svc", outbox_retry_s=0.5)
    server = serve(create_app(settings, tracker_app=tracker))
    page = open_page(chromium, server.url, token="a-revoked-token")
    turn_id = bank_1000(page)
    message = page.locator("#message")
    expect(message).to_contain_text(
        "Not sent yet: the tracker did not take your login (expired or logged out). The turn "
        "is saved by the dicecam service: log in to the tracker below to send it."
    )
    assert tracked(server.url) == []
    log_in(page)  # the turn is sent with the new token, and its receipt shows
    expect(message).to_contain_text(
        "Sent to the tracker: 1000 points recorded for ann on", timeout=20_000
    )
    assert service_turn(server.url, turn_id)["submission"]["status"] == "submitted"
    assert tracked(server.url) == [1000]
    assert not page.errors, page.errors


def test_a_second_turn_the_same_day_is_refused_in_words_and_kept(
    chromium, tmp_path, tracker, serve
):
    from playwright.sync_api import expect

    data = tmp_path / "svc"
    server = serve(create_app(Settings(data_dir=data), tracker_app=tracker))
    first = {"player": "ann", "score": 600, "idempotency_key": "elsewhere-0001"}
    r = httpx.post(
        f"{server.url}/tracker/api/v1/turns", headers=tracker.state.auth, json=first, timeout=30
    )
    assert r.status_code == 201, r.text
    page = open_page(chromium, server.url)
    log_in(page)
    turn_id = bank_1000(page)
    expect(page.locator("#message")).to_contain_text(
        "The tracker refused this turn, it does not count there: ann already took a turn on "
        "2026-06-15"
    )
    held = service_turn(server.url, turn_id)  # kept here as banked, and in the outbox
    assert (held["scored"], held["submission"]["status"]) == (1000, "rejected")
    assert [p.name for p in (data / "outbox" / "rejected").glob("*.json")] == [
        f"dicecam-{turn_id}.json"
    ]
    assert tracked(server.url) == [600]
    assert not page.errors, page.errors


def test_a_finished_turn_read_back_without_its_receipt_says_so(chromium, tmp_path, tracker, serve):
    # The receipt was not saved and the service hands turns over again only when asked
    # (DICECAM_OUTBOX_RETRY_S=0): a page that finds the turn over (its bank made on another
    # page) says the receipt is not there yet, instead of saying nothing of the tracker.
    from playwright.sync_api import expect

    data = tmp_path / "svc"
    submitter = UnsavedOnce(data / "outbox", embedded=True)
    app = create_app(
        Settings(data_dir=data, outbox_retry_s=0), tracker_app=tracker, submitter=submitter
    )
    submitter.turns = app.state.turns
    server = serve(app)
    page = open_page(chromium, server.url)
    log_in(page)
    with submitter.unwritable:
        turn_id = bank_1000(page)
    assert service_turn(server.url, turn_id)["submission"] is None
    other = open_page(chromium, server.url)  # a page that remembered the turn as open
    other.evaluate(
        "id => { localStorage.setItem('dicecam.player', 'ann');"
        " localStorage.setItem('dicecam.open.morning-roll.ann', id); }",
        turn_id,
    )
    other.reload()
    message = other.locator("#message")
    expect(message).to_contain_text("ann's last Morning Roll turn ended while the page was away")
    expect(message).to_contain_text("No tracker receipt saved for this turn yet")
    assert tracked(server.url) == [1000]
    assert not page.errors + other.errors


class FailsOnce(TrackerSubmitter):
    """The service's submitter, whose first hand-over fails unexpectedly (the outbox's disk
    full): the turn's receipt is ``failed``, and the service's next pass hands it over."""

    failed = False

    def __call__(self, session: TurnSession) -> dict[str, Any]:
        if not self.failed:
            self.failed = True
            raise OSError(28, "No space left on device")
        return super().__call__(session)


def test_a_turn_whose_hand_over_failed_shows_the_receipt_of_the_service_s_next_try(
    chromium, tmp_path, tracker, serve
):
    # The page says the service tries a failed hand-over again on its own: it watches for the
    # new receipt as it does for a queued one (it showed 'failed' for good).
    from playwright.sync_api import expect

    data = tmp_path / "svc"
    submitter = FailsOnce(data / "outbox", embedded=True)
    settings = Settings(data_dir=data, outbox_retry_s=0.5)
    server = serve(create_app(settings, tracker_app=tracker, submitter=submitter))
    page = open_page(chromium, server.url)
    log_in(page)
    turn_id = bank_1000(page)
    message = page.locator("#message")
    expect(message).to_contain_text(
        "Not sent yet. The turn is saved by the dicecam service: it will be sent to the "
        "tracker when the tracker can be reached."
    )
    expect(page.locator("#receipt-details")).to_contain_text(
        "OSError: [Errno 28] No space left on device"
    )
    expect(message).to_contain_text(
        "Sent to the tracker: 1000 points recorded for ann on", timeout=20_000
    )
    assert service_turn(server.url, turn_id)["submission"]["status"] == "submitted"
    assert tracked(server.url) == [1000]
    assert not page.errors, page.errors
