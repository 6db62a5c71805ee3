"""Calibration on the camera page in Debian's chromium (Playwright): the camera frame is shown,
corners are tapped (one undone), the boundary is saved and read back through the API, then
removed from the page."""

from __future__ import annotations

import httpx
import pytest

from service.app import create_app
from service.settings import Settings

from dicecam_testing.page import DrawnRoll, TruthReader, chromium_or_skip, launch, write_y4m
from dicecam_testing.servers import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def tap(page, x: float, y: float) -> None:
    """Click the calibration canvas at image pixel (x, y) (scrolled into view first)."""
    canvas = page.locator("#calib-canvas")
    canvas.scroll_into_view_if_needed()
    w, h = page.evaluate(
        "() => { const c = document.getElementById('calib-canvas'); return [c.width, c.height]; }"
    )
    box = canvas.bounding_box()
    canvas.click(position={"x": x * box["width"] / w, "y": y * box["height"] / h})


def test_tap_corners_save_and_remove_the_calibration(tmp_path):
    chromium_or_skip()
    from playwright.sync_api import expect, sync_playwright

    sample = DrawnRoll()
    video = write_y4m(sample.image, tmp_path / "roll.y4m")
    app = create_app(
        Settings(data_dir=tmp_path),
        reader=TruthReader([]),
        tracker_app=None,
        submitter=None,
    )
    corners = [(40, 30), (600, 25), (630, 470), (10, 460)]
    with (
        LiveServer(app) as server,
        sync_playwright() as p,
        httpx.Client(base_url=server.url, timeout=30) as api,
    ):
        browser = launch(p, video)
        page = browser.new_page(viewport={"width": 412, "height": 915}, is_mobile=True)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(server.url + "/")
        expect(page.locator("#calib-status")).to_contain_text("not calibrated")
        expect(page.locator("#calib-remove")).to_be_disabled()

        page.click("#start-camera")
        expect(page.locator("#capture")).to_be_enabled()
        page.wait_for_function("document.getElementById('preview').videoWidth > 0")
        page.click("#calibrate")
        expect(page.locator("#calib-editor")).to_be_visible()
        expect(page.locator("#calib-note")).to_contain_text("proposal", timeout=20_000)
        size = page.evaluate(
            "() => { const c = document.getElementById('calib-canvas'); return [c.width, c.height]; }"
        )
        assert size == [640, 480]  # the camera frame, at its own resolution
        expect(page.locator("#calib-save")).to_be_disabled()

        for x, y in corners[:3]:
            tap(page, x, y)
        tap(page, 320, 240)  # a wrong corner ...
        page.click("#calib-undo")  # ... undone
        tap(page, *corners[3])
        expect(page.locator("#calib-note")).to_contain_text("4 corners")
        page.click("#calib-save")
        expect(page.locator("#calib-status")).to_have_text("calibrated: 4 corners")
        expect(page.locator("#calib-note")).to_contain_text("Saved")

        stored = api.get("/api/v1/calibration").json()["calibration"]
        assert stored is not None and stored["image"] == "camera.jpg"
        assert len(stored["points"]) == 4
        for (x, y), (nx, ny) in zip(corners, stored["points"], strict=True):
            assert nx == pytest.approx(x / 640, abs=0.004) and ny == pytest.approx(
                y / 480, abs=0.004
            )

        # the stored boundary is drawn on the frame in green
        x, y = 320, 27.5  # on the top edge between corners 1 and 2
        green = page.evaluate(
            """([x, y]) => { const g = document.getElementById('calib-canvas').getContext('2d');
                const d = g.getImageData(x - 3, y - 3, 7, 7).data; let n = 0;
                for (let i = 0; i < d.length; i += 4) if (d[i + 1] > 150 && d[i] < 100) n++;
                return n; }""",
            [x, y],
        )
        assert green > 0

        page.click("#calib-remove")
        expect(page.locator("#calib-status")).to_contain_text("not calibrated")
        assert api.get("/api/v1/calibration").json()["calibration"] is None
        assert not (tmp_path / "calibration.json").exists()

        # a broken calibration file is not used, and the page can remove it (its button was
        # disabled, as for no file at all)
        (tmp_path / "calibration.json").write_text("{not json")
        page.reload()
        expect(page.locator("#calib-status")).to_contain_text("not used")
        page.click("#calib-remove")
        expect(page.locator("#calib-status")).to_contain_text("not calibrated")
        assert not (tmp_path / "calibration.json").exists()
        assert not errors, errors
        browser.close()


def test_corners_placed_moved_added_and_removed_by_keyboard_alone_are_saved_as_shown(
    chromium, tmp_path
):
    from playwright.sync_api import expect

    from .test_page_a11y import tab_to

    sample = DrawnRoll()  # 640 x 480: an arrow key moves a corner 1 px, with Shift 10 px
    app = create_app(
        Settings(data_dir=tmp_path), reader=TruthReader([]), tracker_app=None, submitter=None
    )
    with LiveServer(app) as server, httpx.Client(base_url=server.url, timeout=30) as api:
        page = chromium.new_page(viewport={"width": 412, "height": 915})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("filechooser", lambda chooser: None)  # intercepted from the start, not racing
        page.goto(server.url + "/")
        expect(page.locator("#calib-status")).to_contain_text("not calibrated")
        note = page.locator("#calib-note")
        assert tab_to(page, "#calib-pick") == []
        with page.expect_file_chooser() as chooser:
            page.keyboard.press("Enter")
        chooser.value.set_files(
            files=[{"name": "table.jpg", "mimeType": "image/jpeg", "buffer": sample.jpeg}]
        )
        expect(note).to_contain_text("proposal", timeout=20_000)  # its answer came (or not)

        assert tab_to(page, "#calib-add") == []
        for _ in range(4):
            page.keyboard.press("Enter")
        expect(note).to_have_text("Corner 4 of 4 added at 64, 432 px (10% across, 90% down).")
        expect(page.locator("#calib-save")).to_be_enabled()

        second = page.locator("#calib-corners li:nth-child(2) button")
        for _ in range(8):  # back to corner 2
            page.keyboard.press("Shift+Tab")
            if second.evaluate("b => b === document.activeElement"):
                break
        else:
            raise AssertionError("corner 2 not reached with Shift+Tab")
        expect(second).to_have_attribute("aria-pressed", "true")  # the one the keys move
        for key in ("ArrowRight", "ArrowRight", "ArrowRight", "Shift+ArrowDown", "ArrowUp"):
            page.keyboard.press(key)
        moved = "Corner 2 of 4 moved to 579, 57 px (90.5% across, 11.9% down)."
        expect(note).to_have_text(moved)
        expect(second).to_have_text("2: 579, 57")
        expect(second).to_have_attribute(
            "aria-label", "Corner 2 of 4: 579, 57 px (90.5% across, 11.9% down)"
        )
        page.keyboard.press("Insert")  # a corner after it, halfway to corner 3 ...
        expect(note).to_have_text(
            "Corner 3 of 5 added at 577.5, 244.5 px (90.2% across, 50.9% down)."
        )
        assert page.evaluate("document.activeElement.textContent") == "3: 577.5, 244.5"
        page.keyboard.press("Delete")  # ... and removed again
        expect(note).to_have_text("Corner 3 removed: 4 corners left.")
        assert second.evaluate("b => b === document.activeElement")
        shown = [[64, 48], [579, 57], [576, 432], [64, 432]]
        assert page.evaluate("window.dicecamCalibration.points") == shown

        assert tab_to(page, "#calib-save") == []
        page.keyboard.press("Enter")
        expect(page.locator("#calib-status")).to_have_text("calibrated: 4 corners")
        stored = api.get("/api/v1/calibration").json()["calibration"]
        expected = [pytest.approx([x / 640, y / 480], abs=5e-6) for x, y in shown]
        assert stored["points"] == expected  # stored to 5 decimals
        assert not errors, errors
