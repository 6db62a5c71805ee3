"""The tracker's pages in a real chromium (Debian's, driven by Playwright), mounted under a prefix
as ``dicecam serve`` mounts it: register, add a roll, follow the leaderboard to the evidence."""

from __future__ import annotations

import base64
import io
import uuid

import httpx
import pytest
from fastapi import FastAPI

from service.tracker import create_app

pytestmark = [pytest.mark.browser]


def jpeg(width: int = 160, height: int = 120) -> bytes:
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (width, height), (30, 110, 60))
    ImageDraw.Draw(img).rectangle((50, 40, 90, 80), fill=(250, 250, 250))
    buf = io.BytesIO()
    img.save(buf, "JPEG")
    return buf.getvalue()


def test_register_add_roll_and_open_the_evidence(chromium, sqlite_url, clock, serve, seed_players):
    clock.set("2026-10-10T12:00:00+00:00")
    tracker = create_app(sqlite_url, clock=clock)
    outer = FastAPI()
    outer.mount("/tracker", tracker)
    server = serve(outer, root_path="/tracker")
    auth = seed_players(tracker, ["heather"])["heather"]
    body = {
        "player": "heather",
        "score": 600,
        "idempotency_key": str(uuid.uuid4()),
        "rolls": [
            {
                "values": [1, 2, 2, 3, 5, 6],
                "reading": {"width": 160, "height": 120, "dice": [{"value": 1}]},
                "photo_jpeg_b64": base64.b64encode(jpeg()).decode(),
            }
        ],
    }
    assert (
        httpx.post(server.url + "/api/v1/turns", json=body, headers=auth, timeout=30).status_code
        == 201
    )

    page = chromium.new_page(timezone_id="Europe/Paris")  # 14:00 there: the game is shown
    page.goto(server.url + "/register")
    page.fill("input[name=name]", "mike")
    page.fill("input[name=password]", "mike-password")
    page.fill("input[name=timezone]", "Europe/Paris")
    page.click("button")
    assert "Welcome, mike!" in page.text_content("body")
    page.click("text=Add your first roll")
    page.fill("input[name=name]", "mike")
    page.fill("input[name=password]", "mike-password")
    page.fill("input[name=score]", "500")
    page.fill("input[name=comment]", "from the browser")
    page.click("button")
    assert "scored 500" in page.text_content("body")

    page.click("nav >> text=Leaderboard")
    rows = page.locator("table tr").all_text_contents()
    assert rows[1].startswith("1heather600") and rows[2].startswith("2mike500")
    page.click("text=2026-10-10: 600")
    assert page.url.endswith("/tracker/turns/1")
    img = page.locator("img.photo")
    img.wait_for()
    assert page.evaluate("document.querySelector('img.photo').naturalWidth") == 160
    page.click("text=Reading")
    assert '"value": 1' in page.text_content("details pre")
    page.click("main a >> text=heather")  # the h1 names heather too
    assert page.url.endswith("/tracker/players/heather")
    page.click("nav >> text=Roll call")
    assert "mike" in page.text_content("ul") and "heather" in page.text_content("ul")
    tracker.state.db.dispose()
