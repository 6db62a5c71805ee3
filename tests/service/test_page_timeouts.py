"""The camera page when the service hangs, in Debian's chromium (Playwright): every call is given
up after the page's time-out (``?timeout_s=`` on its address, shortened here), the page says the
service did not answer in time and gives its controls back; a move whose answer never came is
not sent twice (the turn is read again first), and live mode keeps at most one frame in flight;
a photo waits longer than a move, and an answer that stalls mid-body times out too. The service
is real; a gate in front of it holds the chosen routes (or a body) until the test opens it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio.to_thread
import httpx
import pytest

from service.app import create_app
from service.settings import Settings

from .conftest import LiveServer
from dicecam_testing.page import (
    DrawnRoll,
    TruthReader,
    launch,
    truth_dice,
    wait_on_page,
    write_y4m,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LATE = "did not answer in time"


class Gate:
    """ASGI wrapper of ``app``: a request whose path ends with one of ``held`` is taken in whole,
    then waits until :meth:`release` and goes on to the app (a stuck service that makes the move
    at last, after the page gave up on it)."""

    def __init__(self, app) -> None:
        self.app = app
        self.held: tuple[str, ...] = ()
        self.opened = threading.Event()

    def hold(self, *paths: str) -> None:
        self.held, self.opened = paths, threading.Event()

    def release(self) -> None:
        self.held = ()
        self.opened.set()

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and self.held and scope["path"].endswith(self.held):
            body = [await receive()]
            while body[-1].get("more_body"):
                body.append(await receive())
            await anyio.to_thread.run_sync(self.opened.wait, 30)
            given = receive

            async def receive():
                return body.pop(0) if body else await given()

        await self.app(scope, receive, send)


@pytest.fixture
def gated(tmp_path: Path) -> Iterator[tuple[LiveServer, Gate]]:
    sample = DrawnRoll()
    reader = TruthReader(truth_dice(sample))
    app = create_app(Settings(data_dir=tmp_path), reader=reader, tracker_app=None, submitter=None)
    gate = Gate(app)
    server = LiveServer(gate).__enter__()
    server.sample = sample
    try:
        yield server, gate
    finally:
        gate.release()
        server.__exit__(None, None, None)


def call_timeout(page, seconds: float) -> None:
    """Set how long the page waits for each call (``TIMEOUT_S`` of page.js, as ``?timeout_s=``
    sets it at load): short for the call the gate holds, long again for the moves around it,
    which took over 1 s under load here (two runs of this file at once: no turn began)."""
    page.evaluate(
        "async s => { const m = await import('/static/page.js');"
        " m.TIMEOUT_S.call = m.TIMEOUT_S.photo = s; }",
        seconds,
    )


def test_a_move_that_hangs_times_out_gives_the_controls_back_and_is_not_sent_twice(chromium, gated):
    from playwright.sync_api import expect

    server, gate = gated
    page = chromium.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    moves: list[str] = []
    page.on("request", lambda r: moves.append(r.url) if "/api/v1/turns/" in r.url else None)
    page.goto(server.url + "/")
    page.fill("#player", "ada")
    page.click("#new-turn")
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
    turn = f"{server.url}/api/v1/turns/{page.evaluate('window.dicecam.turn.id')}"

    gate.hold("/rolls")  # the service is stuck on the roll (for 30 s)
    call_timeout(page, 1)
    page.fill("#typed", "1 5 2 3 4 6")
    page.press("#typed", "Enter")
    # given up at its time-out (1 s), not left hanging
    expect(page.locator("#message")).to_contain_text(f"{LATE} (1 s)")
    call_timeout(page, 10)
    assert page.evaluate("window.dicecam.busy") is False
    expect(page.locator("#typed")).to_have_value("1 5 2 3 4 6")  # kept, to send again
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
    gate.release()  # ... and it makes the roll at last, after the page gave up
    wait_on_page(page, lambda: httpx.get(turn, timeout=30).json()["rolls"] == 1, "the late roll")
    page.press("#typed", "Enter")  # sent again: the turn is read first, the roll not re-sent
    expect(page.locator("#message")).to_contain_text("Your last move reached")
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_keep")
    assert httpx.get(turn, timeout=30).json()["rolls"] == 1

    gate.hold("/keep")
    call_timeout(page, 1)
    keep = page.get_by_role("button", name="Keep 1 5,")
    keep.click()
    expect(page.locator("#message")).to_contain_text(f"{LATE} (1 s)")
    call_timeout(page, 10)
    expect(keep).to_be_enabled()  # the buttons back, the turn as it was shown
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_keep")
    gate.release()
    wait_on_page(
        page, lambda: httpx.get(turn, timeout=30).json()["dice_left"] == 4, "the late keep"
    )
    keep.click()
    expect(page.locator("#message")).to_contain_text("Your last move reached")
    expect(page.locator("#turn-total")).to_have_text("150")
    expect(page.locator("#bank")).to_be_enabled()
    sent = [u for u in moves if "/keep" in u or "/rolls" in u]
    assert len(sent) == 2, sent  # one roll and one keep, each sent once
    assert [r["keep"]["dice"] for r in httpx.get(turn, timeout=30).json()["history"]] == [[1, 5]]
    assert not errors, errors


def in_flight_at_most(events: list[tuple[str, float]]) -> int:
    """The most ``/api/v1/read`` requests the page had on their way at once."""
    now = most = 0
    for kind, _ in events:
        now += 1 if kind == "sent" else -1
        most = max(most, now)
    return most


def test_live_mode_keeps_one_frame_in_flight_and_drops_a_hung_one(gated, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    server, gate = gated
    video = write_y4m(server.sample.image, tmp_path / "roll.y4m")
    with sync_playwright() as p:
        browser = launch(p, video)
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        events: list[tuple[str, float]] = []  # ("sent" | "done" | "dropped", when)

        def note(kind):
            def seen(r):
                if r.url.endswith("/api/v1/read"):
                    events.append((kind, time.monotonic()))

            return seen

        page.on("request", note("sent"))
        page.on("requestfinished", note("done"))
        page.on("requestfailed", note("dropped"))
        page.goto(server.url + "/?timeout_s=2")

        gate.hold("/api/v1/read")
        with page.expect_file_chooser() as chooser:  # a photo read while the service hangs
            page.click("#pick-photo")
        chooser.value.set_files(
            files=[{"name": "a.jpg", "mimeType": "image/jpeg", "buffer": server.sample.jpeg}]
        )
        expect(page.locator("#reading-note")).to_contain_text(f"{LATE} (2 s)")

        page.click("#start-camera")
        expect(page.locator("#capture")).to_be_enabled()
        page.check("#live")  # frames every 0.5 s, each hanging for good
        expect(page.locator("#settle")).to_contain_text(f"{LATE} (2 s)")
        wait_on_page(
            page, lambda: sum(k == "sent" for k, _ in events) >= 3, "two frames after the photo"
        )
        assert in_flight_at_most(events) == 1, events  # not one more every 0.5 s tick
        assert sum(k == "dropped" for k, _ in events) >= 2, events  # each given up at 2 s

        # the next frame waits 10 s for its answer: dropped well before, only Live off dropped
        # it (with a 2 s time-out the uncheck had to be seen in 0.5 s: too short under load)
        call_timeout(page, 10)
        seen = len(events)
        wait_on_page(
            page, lambda: len(events) > seen and events[-1][0] == "sent", "a frame on its way"
        )
        sent = events[-1][1]
        page.uncheck("#live")  # Live off drops the frame on its way at once
        wait_on_page(page, lambda: events[-1][0] == "dropped", "the frame dropped")
        assert events[-1][1] - sent < 8, events
        expect(page.locator("#settle")).to_be_hidden()

        gate.release()  # the service answers again: live mode reads the dice
        page.check("#live")
        expect(page.locator("#settle")).to_contain_text("6 dice")
        assert in_flight_at_most(events) == 1, events
        assert not errors, errors
        browser.close()


def test_calibration_calls_that_hang_time_out_and_leave_the_corners_to_save_again(chromium, gated):
    from playwright.sync_api import expect

    server, gate = gated
    page = chromium.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server.url + "/?timeout_s=1")
    note = page.locator("#calib-note")
    gate.hold("/calibration/proposal", "/calibration")
    page.set_input_files(
        "#calib-file",
        files=[{"name": "t.jpg", "mimeType": "image/jpeg", "buffer": server.sample.jpeg}],
    )
    expect(note).to_contain_text(f"No proposal (The dicecam service {LATE} (1 s)")
    for _ in range(4):
        page.click("#calib-add")
    page.click("#calib-save")
    expect(note).to_contain_text(f"Not saved: The dicecam service {LATE} (1 s)")
    expect(page.locator("#calib-save")).to_be_enabled()  # to try again, the corners kept
    assert len(page.evaluate("window.dicecamCalibration.points")) == 4
    gate.release()
    page.click("#calib-save")
    expect(page.locator("#calib-status")).to_have_text("calibrated: 4 corners")
    assert not errors, errors


def test_a_photo_is_waited_for_longer_than_a_move(chromium, gated):
    """A photo sent (a FormData body) waits TIMEOUT_S.photo for its reading, any other call
    TIMEOUT_S.call: a reading answered after the call's time-out is still shown."""
    from playwright.sync_api import expect

    server, gate = gated
    page = chromium.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server.url + "/")
    page.evaluate(
        "async () => { const m = await import('/static/page.js');"
        " m.TIMEOUT_S.photo = 20; m.TIMEOUT_S.call = 1; }"
    )
    gate.hold("/api/v1/read", "/api/v1/score")
    with page.expect_request(lambda r: r.url.endswith("/api/v1/read")):
        page.set_input_files(
            "#file",
            files=[{"name": "r.jpg", "mimeType": "image/jpeg", "buffer": server.sample.jpeg}],
        )
    page.wait_for_timeout(2500)  # past the call's time-out, well within the photo's
    note = page.locator("#reading-note")
    assert LATE not in note.inner_text()
    gate.release()
    expect(page.locator("#dice .die")).to_have_count(6)
    assert LATE not in note.inner_text()

    gate.hold("/api/v1/score")  # a roll typed in is a call: given up after 1 s
    page.fill("#typed", "1 5 2 3 4 6")
    page.press("#typed", "Enter")
    expect(page.locator("#message")).to_contain_text(f"{LATE} (1 s)")
    gate.release()
    assert not errors, errors


class StalledBody:
    """ASGI wrapper of ``app``: the answer to a path ending with ``path`` sends its headers and
    all its body but the last byte, then stalls until :meth:`release` (a connection that hangs
    mid-answer)."""

    def __init__(self, app, path: str) -> None:
        self.app, self.path, self.go = app, path, threading.Event()

    def release(self) -> None:
        self.go.set()

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http" or not scope["path"].endswith(self.path):
            await self.app(scope, receive, send)
            return

        async def stalled(message) -> None:
            body = message.get("body", b"")
            if message["type"] == "http.response.body" and len(body) > 1:
                most = len(body) - 1
                await send({"type": "http.response.body", "body": body[:most], "more_body": True})
                await anyio.to_thread.run_sync(self.go.wait, 30)
                message = {**message, "body": body[most:]}
            await send(message)

        await self.app(scope, receive, stalled)


def test_an_answer_that_stalls_mid_body_times_out_as_one_that_never_came(chromium, tmp_path):
    """The headers came (200) but not the rest of the body: given up at the time-out and said
    so, not taken as an empty answer."""
    from playwright.sync_api import expect

    app = create_app(Settings(data_dir=tmp_path), tracker_app=None, submitter=None)
    stall = StalledBody(app, "/api/v1/score")
    with LiveServer(stall) as server:
        page = chromium.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(server.url + "/?timeout_s=5")  # the headers come well within it
        page.fill("#typed", "1 5 2 3 4 6")
        try:
            with page.expect_response(lambda r: "/api/v1/score" in r.url) as answer:
                page.press("#typed", "Enter")
            assert answer.value.status == 200  # the headers came ...
            expect(page.locator("#message")).to_contain_text(  # ... the body did not
                f"{LATE} (5 s): nothing on this page is lost, try again.", timeout=15_000
            )
        finally:
            stall.release()
        assert not errors, errors
