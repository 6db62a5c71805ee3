"""Calibration on the camera page when the player opens a second photo before the first one is
done (Debian's chromium, Playwright, a real service): the second photo wins, its note, its
corners and its proposal, whether the first is still being decoded when the second is opened or
its proposal request fails after the second's answer came."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from service.app import create_app
from service.settings import Settings

from dicecam_testing.page import DrawnRoll, TruthReader
from dicecam_testing.servers import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SAMPLES = Path(__file__).resolve().parents[2] / "datasets" / "samples"
EDGE = "roll-s21-031.jpg"  # 640 x 480: the shipped outline model proposes an outline for it

# The browser's own createImageBitmap, with the first photo's decode handed back only when the
# test calls window.releaseFirstDecode() (a slow decode of a large photo, made deterministic).
HOLD_FIRST_DECODE = """
(() => {
  const real = window.createImageBitmap.bind(window);
  let calls = 0, release;
  const gate = new Promise((resolve) => { release = resolve; });
  window.releaseFirstDecode = () => release();
  window.firstDecodeDone = false;
  window.createImageBitmap = async (...args) => {
    if (++calls > 1) return real(...args);
    const image = await real(...args);
    await gate;
    setTimeout(() => { window.firstDecodeDone = true; }, 0);
    return image;
  };
})();
"""


def choose(page, name: str, data: bytes) -> None:
    page.set_input_files(
        "#calib-file", files=[{"name": name, "mimeType": "image/jpeg", "buffer": data}]
    )


def serve(tmp_path: Path) -> LiveServer:
    app = create_app(
        Settings(data_dir=tmp_path), reader=TruthReader([]), tracker_app=None, submitter=None
    )
    return LiveServer(app)


def wait_held(page, held: list) -> None:
    """Until ``page.route`` has held the request: its handler runs when the test reads
    Playwright's messages, which may come after the page shows the request was sent."""
    deadline = time.monotonic() + 20
    while not held:
        assert time.monotonic() < deadline, "the page sent no request to hold"
        page.wait_for_timeout(10)  # reads the messages, the route's among them


def settle(page) -> None:
    page.evaluate("() => new Promise((r) => setTimeout(r, 300))")  # the page takes it in


def test_a_photo_still_decoding_when_another_is_opened_does_not_replace_it(chromium, tmp_path):
    from playwright.sync_api import expect

    edge = (SAMPLES / EDGE).read_bytes()
    with serve(tmp_path) as server:
        page = chromium.new_page(viewport={"width": 412, "height": 915})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        asked: list[str] = []
        page.on("request", lambda r: asked.append(r.url) if "proposal" in r.url else None)
        page.add_init_script(HOLD_FIRST_DECODE)
        page.goto(server.url + "/")
        note = page.locator("#calib-note")

        choose(page, EDGE, edge)  # its decode is held ...
        choose(page, "felt.jpg", DrawnRoll(width=320, height=240).jpeg)  # ... the next is opened
        expect(note).to_contain_text("or use the proposal.", timeout=20_000)
        page.click("#calib-add")  # a corner placed on the photo on screen
        expect(page.locator("#calib-corners button")).to_have_count(1)
        said = note.text_content()
        proposal = page.evaluate("window.dicecamCalibration.proposal")

        page.evaluate("window.releaseFirstDecode()")
        page.wait_for_function("() => window.firstDecodeDone", timeout=10_000)
        settle(page)
        cal = page.evaluate("window.dicecamCalibration")
        assert (cal["name"], cal["width"], cal["height"]) == ("felt.jpg", 320, 240)
        assert cal["points"] == [[32, 24]] and cal["proposal"] == proposal
        expect(note).to_have_text(said)  # not "Tap the corners ..." of the photo replaced
        expect(page.locator("#calib-corners button")).to_have_count(1)
        assert len(asked) == 1, asked  # the photo replaced asked for no proposal
        assert not errors, errors


def test_a_proposal_that_fails_after_the_next_photo_was_answered_is_dropped(chromium, tmp_path):
    from playwright.sync_api import expect

    edge = (SAMPLES / EDGE).read_bytes()
    with serve(tmp_path) as server:
        page = chromium.new_page(viewport={"width": 412, "height": 915})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        held = []

        def hold_first(route) -> None:
            if held:
                route.continue_()
            else:
                held.append(route)

        page.route("**/api/v1/calibration/proposal", hold_first)
        page.goto(server.url + "/")
        note, use = page.locator("#calib-note"), page.locator("#calib-proposal")

        choose(page, "felt.jpg", DrawnRoll().jpeg)  # its proposal request is held ...
        page.wait_for_function("() => document.getElementById('calib-note').textContent !== ''")
        wait_held(page, held)
        assert len(held) == 1
        choose(page, EDGE, edge)  # ... the next photo's is answered
        expect(note).to_contain_text("the learned outline (", timeout=20_000)
        expect(use).to_be_enabled()
        proposal = page.evaluate("window.dicecamCalibration.proposal")
        assert len(proposal) >= 3, proposal
        use.click()
        expect(page.locator("#calib-corners button")).to_have_count(len(proposal))
        said = note.text_content()

        held[0].fulfill(
            status=503, content_type="application/json", json={"detail": "no outline model"}
        )
        settle(page)
        expect(note).to_have_text(said)  # not "No proposal (no outline model)"
        expect(use).to_be_enabled()
        cal = page.evaluate("window.dicecamCalibration")
        assert cal["name"] == EDGE and cal["proposal"] == cal["points"] == proposal
        assert not errors, errors


def test_a_photo_opened_while_a_save_is_on_its_way_keeps_its_corners(chromium, tmp_path):
    from playwright.sync_api import expect

    with serve(tmp_path) as server:
        page = chromium.new_page(viewport={"width": 412, "height": 915})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        held = []

        def hold_save(route) -> None:
            if route.request.method == "PUT" and not held:
                held.append(route)
            else:
                route.continue_()

        page.route("**/api/v1/calibration", hold_save)
        page.goto(server.url + "/")
        note, corners = page.locator("#calib-note"), page.locator("#calib-corners button")
        choose(page, "first.jpg", DrawnRoll().jpeg)
        expect(note).to_contain_text("or use the proposal.", timeout=20_000)
        for n in (1, 2, 3):
            page.click("#calib-add")
            expect(corners).to_have_count(n)
        page.click("#calib-save")  # its answer is held ...
        page.wait_for_function("() => document.getElementById('calib-save').disabled")
        wait_held(page, held)
        assert len(held) == 1
        choose(page, "second.jpg", DrawnRoll(width=320, height=240).jpeg)  # ... a photo opened
        expect(note).to_contain_text("or use the proposal.", timeout=20_000)
        page.click("#calib-add")
        expect(corners).to_have_count(1)
        said = note.text_content()

        held[0].continue_()  # the first photo's corners are saved
        expect(page.locator("#calib-status")).to_have_text("calibrated: 3 corners")
        settle(page)
        cal = page.evaluate("window.dicecamCalibration")
        assert (cal["name"], cal["points"]) == ("second.jpg", [[32, 24]])  # not wiped
        expect(corners).to_have_count(1)
        expect(note).to_have_text(said)
        assert not errors, errors
