"""The camera page in Debian's chromium (Playwright) for the service's browser tests: a roll
drawn with OpenCV or rendered by :mod:`vision.synth`, a Y4M video of it for chromium's fake
camera, a reader that reports a roll's true labels, small page probes, and the chromium the
``chromium`` fixture shares between tests (:class:`SharedChromium`).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from vision import Die, Reading, load_image

CHROMIUM = os.environ.get("DICECAM_CHROMIUM", "/usr/bin/chromium")


def chromium_or_skip() -> str:
    if not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
        pytest.skip(f"chromium not found at {CHROMIUM} (apt-get install chromium)")
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    return CHROMIUM


class SharedChromium:
    """One Debian chromium under Playwright, kept open across consecutive tests that ask for
    the ``chromium`` fixture (a launch took 1-2.5 s a test here)."""

    def __init__(self) -> None:
        self.playwright = None
        self.browser = None

    def get(self):
        if self.browser is None or not self.browser.is_connected():
            from playwright.sync_api import sync_playwright

            path = chromium_or_skip()
            self.close()
            self.playwright = sync_playwright().start()
            self.browser = self.playwright.chromium.launch(
                executable_path=path, args=["--no-sandbox"]
            )
        return self.browser

    def close(self) -> None:
        browser, playwright, self.browser, self.playwright = (
            self.browser,
            self.playwright,
            None,
            None,
        )
        try:
            if browser is not None and browser.is_connected():
                browser.close()
        finally:
            if playwright is not None:
                playwright.stop()


def synthetic_roll(n: int = 6, width: int = 640, height: int = 480, need=(1, 5)):
    """A rendered roll of ``n`` dice, all resting on the table and clearly visible, showing
    the faces ``need`` (a 1 and a 5: several keeps to rank)."""
    from vision.synth import make_sample

    for index in (53, *range(300)):  # 53: the first fit when written; searched if synth changes
        s = make_sample(11, index, width, height, n_dice=n)
        values = [d["value"] for d in s.dice]
        if (
            len(s.dice) == n
            and all(v in values for v in need)
            and all(
                d["state"] == "table"
                and d["labelled"]
                and d["class"] < 6
                and d["box"]
                and d["box"][2] - d["box"][0] > 30
                for d in s.dice
            )
        ):
            return s
    pytest.skip(f"no synthetic roll of {n} clear dice found")


PIPS = {
    1: [(0, 0)],
    2: [(-1, -1), (1, 1)],
    3: [(-1, -1), (0, 0), (1, 1)],
    4: [(-1, -1), (1, -1), (-1, 1), (1, 1)],
    5: [(-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)],
    6: [(-1, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (1, 1)],
}


class DrawnRoll:
    """A roll drawn with OpenCV (felt, shadows, white dice with pips), with its exact labels:
    deterministic and fast, for the page's mechanics (the real reader runs in test_page_e2e)."""

    def __init__(self, values=(5, 3, 1, 2, 1, 2), width: int = 640, height: int = 480) -> None:
        import cv2
        import numpy as np

        rng = np.random.default_rng(6)
        img = np.full((height, width, 3), (40, 110, 45), np.uint8)
        img = cv2.add(img, rng.integers(0, 12, img.shape, dtype=np.uint8))
        self.dice = []
        for i, v in enumerate(values):
            cx, cy, side = 90 + 95 * i, 200 + (60 if i % 2 else 0), 56
            x1, y1 = cx - side // 2, cy - side // 2
            cv2.rectangle(img, (x1 + 6, y1 + 8), (x1 + side + 6, y1 + side + 8), (20, 60, 25), -1)
            cv2.rectangle(img, (x1, y1), (x1 + side, y1 + side), (235, 235, 230), -1)
            for dx, dy in PIPS[v]:
                cv2.circle(img, (cx + dx * 15, cy + dy * 15), 6, (20, 20, 20), -1, cv2.LINE_AA)
            self.dice.append({"value": v, "box": [x1, y1, x1 + side, y1 + side]})
        self.image = cv2.GaussianBlur(img, (3, 3), 0)
        self.jpeg = cv2.imencode(".jpg", self.image, [cv2.IMWRITE_JPEG_QUALITY, 92])[1].tobytes()


def write_y4m(bgr, path: Path, frames: int = 4) -> Path:
    """An uncompressed Y4M video (I420) chromium's fake camera plays in a loop."""
    import cv2

    h, w = bgr.shape[:2]
    yuv = cv2.cvtColor(bgr, cv2.COLOR_BGR2YUV_I420).tobytes()
    with open(path, "wb") as f:
        f.write(f"YUV4MPEG2 W{w} H{h} F10:1 Ip A1:1 C420jpeg\n".encode())
        for _ in range(frames):
            f.write(b"FRAME\n" + yuv)
    return path


def photo(sample, quality: int) -> bytes:
    """The roll as a distinct JPEG file (the service caches readings by photo bytes)."""
    import cv2

    return cv2.imencode(".jpg", sample.image, [cv2.IMWRITE_JPEG_QUALITY, quality])[1].tobytes()


def truth_dice(sample) -> list[Die]:
    return [Die(int(d["value"]), tuple(d["box"]), 0.99) for d in sample.dice]


class TruthReader:
    """Decodes the frame for real; reports scripted dice if any, else the roll's true labels."""

    def __init__(self, dice: list[Die]) -> None:
        self.dice = dice
        self.script: list[list[Die]] = []
        self.calls = 0

    def read(self, image, expected_dice=None) -> Reading:
        img = load_image(image)
        self.calls += 1
        dice = self.script.pop(0) if self.script else self.dice
        return Reading(img.width, img.height, list(dice), expected_dice=expected_dice)


def launch(playwright, video: Path):
    return playwright.chromium.launch(
        executable_path=chromium_or_skip(),
        args=[
            "--no-sandbox",
            "--headless",
            "--use-fake-ui-for-media-stream",
            "--use-fake-device-for-media-stream",
            f"--use-file-for-fake-video-capture={video}",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
        ],
    )


def canvas_point(page, box) -> tuple[float, float]:
    """Client coordinates of the centre of ``box`` (image pixels) on the contained canvas."""
    return page.evaluate(
        """([x1, y1, x2, y2]) => {
            const c = document.getElementById('photo'); const r = c.getBoundingClientRect();
            const s = Math.min(r.width / c.width, r.height / c.height);
            const ox = (r.width - c.width * s) / 2, oy = (r.height - c.height * s) / 2;
            return [r.left + ox + (x1 + x2) / 2 * s, r.top + oy + (y1 + y2) / 2 * s];
        }""",
        list(box),
    )


def pixel(page, x: float, y: float) -> list[int]:
    return page.evaluate(
        "([x, y]) => Array.from(document.getElementById('photo').getContext('2d')"
        ".getImageData(x, y, 1, 1).data.slice(0, 3))",
        [x, y],
    )


def read_requests(page) -> list[str]:
    """The URLs of the page's ``/api/v1/read`` requests, filled in as they are sent."""
    reads: list[str] = []
    page.on("request", lambda r: reads.append(r.url) if r.url.endswith("/api/v1/read") else None)
    return reads


def open_turn(playwright, server, video: Path, player: str = "ada"):
    """Chromium on the page, fed ``video``, with a new turn started: (browser, page, the read
    requests the page sends)."""
    from playwright.sync_api import expect

    browser = launch(playwright, video)
    page = browser.new_page(viewport={"width": 412, "height": 915}, is_mobile=True)
    reads = read_requests(page)
    page.goto(server.url + "/")
    page.fill("#player", player)
    page.click("#new-turn")
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
    return browser, page, reads


def wait_on_page(page, check, what: str, timeout: float = 15) -> None:
    """Wait until ``check()``, letting the page's events in (Playwright's sync API takes them
    only while it is called: a list :func:`read_requests` fills grows meanwhile); else fail
    naming ``what``."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        page.wait_for_timeout(20)


def chips(page) -> list[str]:
    return page.eval_on_selector_all("#dice .die", "els => els.map(e => e.textContent)")


def kept_on_a_phone(chromium, url: str):
    """A phone-sized page of the service at ``url`` where ann's new Morning Roll turn rolled
    1 1 5 2 3 4 (typed) and kept 1 1 5: the page and its "Take back keep" button."""
    from playwright.sync_api import expect

    page = chromium.new_context(viewport={"width": 390, "height": 844}).new_page()
    page.goto(url + "/")
    take_back = page.get_by_role("button", name="Take back keep")
    page.fill("#player", "ann")
    page.click("#new-turn")
    expect(page.locator("#message")).to_contain_text("ann: roll 6 dice")
    page.fill("#typed", "1 1 5 2 3 4")
    page.press("#typed", "Enter")
    page.get_by_role("button", name="Keep 1 1 5,").click()
    expect(take_back).to_be_visible()
    return page, take_back
