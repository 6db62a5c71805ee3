"""End to end: chromium's fake camera shows a roll, the page reads it with the REAL reader and the
shipped model (live mode, no button press), and a Morning Roll turn is played to the bank.

Uses a committed sample photo (``datasets/samples/truth.json``) with six dice on the table when
there is one, else a synthetic roll rendered by ``vision.synth`` (its labels are the truth).
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from service.app import create_app
from service.settings import Settings
from vision.backends import resolve_backend

from dicecam_testing.page import chips, chromium_or_skip, launch, synthetic_roll, write_y4m
from dicecam_testing.servers import LiveServer

REPO = Path(__file__).resolve().parents[2]
MODEL = REPO / "models" / "dicecam-reader.onnx"
SAMPLES = REPO / "datasets" / "samples"
pytestmark = [pytest.mark.browser, pytest.mark.slow]


def six_dice_roll():
    """(BGR image, true values) of a roll of six dice all on the table."""
    import cv2
    import numpy as np

    truth_file = SAMPLES / "truth.json"
    if truth_file.is_file():
        data = json.loads(truth_file.read_text())
        if isinstance(data, list):
            data = {d["image"]: d for d in data}
        for name, t in sorted(data.items()):
            t = t if isinstance(t, dict) else {"values": t}
            if len(t["values"]) == 6 and not t.get("off_table") and not t.get("cocked"):
                img = cv2.imdecode(np.fromfile(SAMPLES / name, np.uint8), cv2.IMREAD_COLOR)
                if img is not None:
                    return img, list(t["values"])
    sample = synthetic_roll(6)
    return sample.image, [int(d["value"]) for d in sample.dice]


def test_a_real_reading_from_the_camera_plays_a_turn(tmp_path):
    if not MODEL.is_file():
        pytest.skip(f"shipped model not committed yet: {MODEL}")
    chromium_or_skip()
    import cv2
    from playwright.sync_api import expect, sync_playwright

    image, truth = six_dice_roll()
    h, w = image.shape[:2]
    scale = 640 / max(h, w)
    image = cv2.resize(image, (int(w * scale) // 2 * 2, int(h * scale) // 2 * 2))
    video = write_y4m(image, tmp_path / "roll.y4m")
    app = create_app(Settings(data_dir=tmp_path), tracker_app=None, submitter=None)
    with LiveServer(app) as server, sync_playwright() as p:
        browser = launch(p, video)
        page = browser.new_page(viewport={"width": 412, "height": 915}, is_mobile=True)
        page.goto(server.url + "/")
        page.fill("#player", "stefan")
        page.click("#new-turn")
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
        page.check("#live")
        expect(page.locator("#settle")).to_contain_text("settled", timeout=60_000)
        shown = [int(t.rstrip("?")) for t in chips(page)]
        assert sorted(shown) == sorted(truth), f"page shows {shown}, the roll is {truth}"
        state = page.locator("#turn-state")
        expect(state).not_to_have_attribute("data-state", "awaiting_roll", timeout=20_000)
        health = httpx.get(server.url + "/api/v1/health", timeout=30).json()["reader"]
        assert health["loaded"] is True and health["model"] == str(MODEL)
        assert health["backend"] == resolve_backend("auto")
        stem = MODEL.stem  # the second-stage models that lie beside the shipped detector
        for stage in ("faces", "cocked", "verify"):
            beside = MODEL.with_name(f"{stem}-{stage}.onnx")
            assert health["stages"][stage] == (beside.name if beside.is_file() else None)
        page.uncheck("#live")
        if page.get_attribute("#turn-state", "data-state") == "bust":  # a roll with nothing to keep
            expect(page.locator("#message")).to_contain_text("Bust")
            return
        best = page.locator("#keeps li button").first
        expect(best).to_contain_text("expect")
        points = int(best.inner_text().split("\n")[1].split(" pts")[0])
        best.click()
        expect(page.locator("#turn-total")).to_have_text(str(points))
        if page.locator("#bank").is_enabled():
            page.click("#bank")
            expect(page.locator("#message")).to_contain_text(f"Banked {points} points")
        browser.close()
