"""Calibration on the camera page at its edges, in Debian's chromium (Playwright) against a real
service: the learned outline proposed for a photo is what "Use proposal" places, a corner moved
from it does not move the proposal, and what is saved is the corners shown; a proposal answered
for a photo no longer on screen is dropped; Save waits for 3 corners; and a calibration the
service does not answer for (read at load, or removed) says so instead of staying silent."""

from __future__ import annotations

import threading
from pathlib import Path

import anyio.to_thread
import httpx
import pytest

from service.app import create_app
from service.settings import Settings

from dicecam_testing.page import DrawnRoll, TruthReader
from dicecam_testing.servers import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SAMPLES = Path(__file__).resolve().parents[2] / "datasets" / "samples"
EDGE = "roll-s21-031.jpg"  # 640 x 480: the shipped outline model proposes a polygon for it
LATE = "The dicecam service did not answer in time (1 s)"


class HoldFirstProposal:
    """ASGI wrapper of ``app``: the first POST .../calibration/proposal waits until
    :meth:`release` (a slow answer for a photo the player has already replaced)."""

    def __init__(self, app) -> None:
        self.app = app
        self.opened = threading.Event()
        self.arrived = threading.Event()

    async def __call__(self, scope, receive, send) -> None:
        if (
            scope["type"] == "http"
            and scope["path"].endswith("/calibration/proposal")
            and not self.arrived.is_set()
        ):
            self.arrived.set()
            await anyio.to_thread.run_sync(self.opened.wait, 30)
        await self.app(scope, receive, send)

    def release(self) -> None:
        self.opened.set()


def proposal_of(client: httpx.Client, photo: bytes) -> list[list[float]]:
    r = client.post("/api/v1/calibration/proposal", files={"photo": ("p.jpg", photo, "image/jpeg")})
    if r.status_code == 503:
        pytest.skip(r.json()["detail"])  # no shipped outline model
    assert r.status_code == 200, r.text
    return r.json()["outline"]


def choose(page, name: str, data: bytes) -> None:
    page.set_input_files(
        "#calib-file", files=[{"name": name, "mimeType": "image/jpeg", "buffer": data}]
    )


def points(page) -> list[list[float]]:
    return page.evaluate("window.dicecamCalibration.points")


def test_the_proposal_is_placed_as_proposed_and_the_corners_shown_are_saved(chromium, tmp_path):
    from playwright.sync_api import expect

    edge = (SAMPLES / EDGE).read_bytes()
    app = create_app(
        Settings(data_dir=tmp_path), reader=TruthReader([]), tracker_app=None, submitter=None
    )
    with LiveServer(app) as server, httpx.Client(base_url=server.url, timeout=60) as api:
        outline = proposal_of(api, edge)
        assert outline and len(outline) >= 4, outline  # the table's edge crosses the photo
        k = len(outline)
        page = chromium.new_page(viewport={"width": 412, "height": 915})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(server.url + "/")
        note, use = page.locator("#calib-note"), page.locator("#calib-proposal")
        save, corners = page.locator("#calib-save"), page.locator("#calib-corners button")

        choose(page, "felt.jpg", DrawnRoll().jpeg)  # the surface fills the frame: no outline
        expect(note).to_contain_text("no edge seen", timeout=20_000)
        expect(use).to_be_disabled()
        for n in (1, 2, 3):  # Save waits for a third corner
            page.click("#calib-add")
            expect(corners).to_have_count(n)
            if n < 3:
                expect(save).to_be_disabled()
        expect(save).to_be_enabled()

        choose(page, EDGE, edge)
        expect(note).to_contain_text(f"the learned outline ({k} corners)", timeout=20_000)
        expect(corners).to_have_count(0)  # the corners of the other photo are gone
        use.click()
        assert points(page) == outline
        expect(corners).to_have_count(k)
        x, y = outline[0]
        assert x == 0, outline  # the first corner is on the photo's left edge ...
        first = page.locator("#calib-corners li:nth-child(1) button")
        first.focus()
        page.keyboard.press("ArrowLeft")  # ... and is not moved off it
        down = f"{round(100 * y / 480, 1):g}%"
        expect(note).to_have_text(f"Corner 1 of {k} moved to 0, {y:g} px (0% across, {down} down).")
        page.keyboard.press("Shift+ArrowRight")
        assert points(page)[0] == [10, y]
        page.click("#calib-clear")
        use.click()  # the proposal is as the service proposed it, not as corner 1 was moved
        assert points(page) == outline

        first.focus()
        page.keyboard.press("Control+ArrowRight")  # the browser's, not a corner's move
        assert points(page) == outline
        page.keyboard.press("Shift+ArrowRight")
        shown = [[10, y], *outline[1:]]
        assert points(page) == shown
        save.click()
        expect(page.locator("#calib-status")).to_have_text(f"calibrated: {k} corners")
        stored = api.get("/api/v1/calibration").json()["calibration"]
        assert stored["image"] == EDGE
        assert stored["points"] == [pytest.approx([x / 640, y / 480], abs=5e-6) for x, y in shown]
        assert points(page) == []  # saved: the next calibration starts from no corners
        expect(corners).to_have_count(0)
        expect(save).to_be_disabled()

        page.set_input_files(  # not a photo: said so, the editor kept as it was
            "#calib-file", files=[{"name": "a.txt", "mimeType": "text/plain", "buffer": b"no"}]
        )
        expect(note).to_have_text("Cannot show this file: choose a photo (JPEG, PNG, WebP).")
        page.click("#calib-close")
        expect(page.locator("#calib-editor")).to_be_hidden()
        expect(note).to_have_text("")
        assert not errors, errors


def test_a_proposal_answered_for_a_photo_replaced_meanwhile_is_dropped(chromium, tmp_path):
    from playwright.sync_api import expect

    edge = (SAMPLES / EDGE).read_bytes()
    app = create_app(
        Settings(data_dir=tmp_path), reader=TruthReader([]), tracker_app=None, submitter=None
    )
    gate = HoldFirstProposal(app)
    with LiveServer(gate) as server:
        page = chromium.new_page(viewport={"width": 412, "height": 915})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(server.url + "/")
        note = page.locator("#calib-note")
        try:
            choose(page, EDGE, edge)  # its proposal is held ...
            assert gate.arrived.wait(20)
            choose(page, "felt.jpg", DrawnRoll().jpeg)  # ... while another photo is chosen
            expect(note).to_contain_text("no edge seen", timeout=20_000)
            with page.expect_response(lambda r: r.url.endswith("/calibration/proposal")) as late:
                gate.release()
            assert late.value.ok and len(late.value.json()["outline"]) >= 4
        finally:
            gate.release()
        page.evaluate("() => new Promise((r) => setTimeout(r, 300))")  # the page takes it in
        expect(note).to_contain_text("no edge seen")
        expect(page.locator("#calib-proposal")).to_be_disabled()
        assert page.evaluate("window.dicecamCalibration.proposal") is None
        assert not errors, errors


class HoldCalibration:
    """ASGI wrapper of ``app``: while held, GET and DELETE /api/v1/calibration wait until
    :meth:`release` (a service that stopped answering)."""

    def __init__(self, app) -> None:
        self.app = app
        self.opened = threading.Event()
        self.opened.set()

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and scope["path"].endswith("/api/v1/calibration"):
            await anyio.to_thread.run_sync(self.opened.wait, 30)
        await self.app(scope, receive, send)


def test_a_calibration_the_service_does_not_answer_for_is_said_not_hidden(chromium, tmp_path):
    from playwright.sync_api import expect

    app = create_app(
        Settings(data_dir=tmp_path), reader=TruthReader([]), tracker_app=None, submitter=None
    )
    gate = HoldCalibration(app)
    with LiveServer(gate) as server, httpx.Client(base_url=server.url, timeout=30) as api:
        page = chromium.new_page()
        status = page.locator("#calib-status")
        try:
            gate.opened.clear()  # the calibration is not answered as the page loads
            page.goto(server.url + "/?timeout_s=1")
            expect(status).to_have_text(
                f"calibration unavailable: {LATE}: nothing on this page is lost, try again."
            )
            gate.opened.set()
            good = {"points": [[10, 10], [600, 20], [620, 470]], "width": 640, "height": 480}
            assert api.put("/api/v1/calibration", json=good).status_code == 200
            page.reload()
            expect(status).to_have_text("calibrated: 3 corners")
            gate.opened.clear()  # and then not for its removal
            page.click("#calib-remove")
            expect(page.locator("#calib-note")).to_have_text(
                f"Not removed: {LATE}: nothing on this page is lost, try again."
            )
            expect(status).to_have_text("calibrated: 3 corners")
        finally:
            gate.opened.set()
