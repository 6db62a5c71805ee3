"""A hostile player or web page against a real server: what an attack found, fixed, and what
held up. A roll's reading is stored with its turn and loaded by every page and history that
lists the turn, so a huge one is refused; a path or a message that echoes what a client sent
cannot forge lines in the server's log; what a player writes is shown as text on the pages."""

from __future__ import annotations

import logging
import re

import httpx
import pytest

from service.app import create_app
from service.settings import Settings
from service.tracker.schemas import MAX_READING_BYTES

from dicecam_testing.turns import QueueReader

HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)>\"'"


def _reading(size: int) -> dict:
    """A reading of about ``size`` bytes as compact JSON: six dice and padding in a note."""
    dice = [{"value": v, "box": [10.0, 20.0, 30.0, 40.0], "confidence": 0.9} for v in range(1, 7)]
    body = {"dice": dice, "values": [1, 2, 3, 4, 5, 6], "note": ""}
    body["note"] = "x" * max(0, size - len(str(body).replace(" ", "")))
    return body


def test_a_huge_reading_is_refused_and_nothing_is_stored(sqlite_tracker, join, turn):
    http, _ = sqlite_tracker
    auth = join(http, "mal")
    huge = [{"values": [1, 5], "reading": _reading(MAX_READING_BYTES + 1000)}]
    r = http.post("/api/v1/turns", json=turn("mal", rolls=huge), headers=auth)
    assert r.status_code == 422, r.text[:300]
    detail = r.json()["detail"]
    assert f"expected a reading of at most {MAX_READING_BYTES} bytes" in detail, detail
    assert "'rolls.0.reading'" in detail and "xxxx" not in detail  # named, not echoed
    assert http.get("/api/v1/players/mal/turns").json()["turns"] == []
    usual = [{"values": [1, 5], "reading": _reading(2000)}]  # the day is still free
    r = http.post("/api/v1/turns", json=turn("mal", rolls=usual), headers=auth)
    assert r.status_code == 201, r.text[:300]
    (stored,) = http.get("/api/v1/players/mal/turns").json()["turns"]
    assert stored["rolls"][0]["reading"] == usual[0]["reading"]


@pytest.fixture
def refusals():
    """The lines of ``dicecam.requests`` (a WARNING per refused request), as logged."""
    lines: list[str] = []
    handler = logging.Handler(level=logging.WARNING)
    handler.emit = lambda record: lines.append(record.getMessage())
    logger = logging.getLogger("dicecam.requests")
    before = logger.level
    logger.setLevel(logging.WARNING)
    logger.addHandler(handler)
    yield lines
    logger.removeHandler(handler)
    logger.setLevel(before)


@pytest.fixture
def service(tmp_path, serve):
    """The service with its embedded tracker on a real server."""
    app = create_app(Settings(data_dir=tmp_path, outbox_retry_s=0), reader=QueueReader())
    with httpx.Client(base_url=serve(app).url, timeout=30) as http:
        yield http


FORGED = "refused POST /tracker/api/v1/tokens (429): too many wrong passwords for 'bob'"


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/x%0A" + FORGED.replace(" ", "%20"),  # a 404 of the service (JSON)
        "/tracker/players/x%0D%0A" + FORGED.replace(" ", "%20"),  # a page of the tracker
        "/tracker/api/v1/players/x%E2%80%A8%1B%5B2J/turns",  # a line separator, a terminal code
    ],
)
def test_a_refused_request_cannot_forge_a_line_of_the_log(service, refusals, path):
    assert service.get(path).status_code == 404
    assert refusals, "the refusal was logged"
    for line in refusals:
        assert line.isprintable(), repr(line)  # one line, no control character
    assert not any(line.startswith("refused POST") for line in "\n".join(refusals).splitlines())
    assert "\\n" in refusals[-1] or "\\u2028" in refusals[-1], refusals[-1]  # shown escaped


def test_what_a_player_writes_is_shown_as_text_on_every_page(sqlite_tracker, join, turn):
    """Held up: comments, readings, names in addresses and errors echoing input are escaped,
    and the pages' Content-Security-Policy would not run an injected script anyway."""
    http, _ = sqlite_tracker
    auth = join(http, "eve")
    rolls = [{"values": [1, 5], "reading": {HOSTILE: HOSTILE, "note": "</pre>" + HOSTILE}}]
    r = http.post("/api/v1/turns", json=turn("eve", comment=HOSTILE, rolls=rolls), headers=auth)
    assert r.status_code == 201, r.text
    pages = [
        http.get(f"/turns/{r.json()['id']}"),
        http.get("/players/eve"),
        http.get("/"),
        http.get("/players/" + HOSTILE),  # 404, echoing the name
        http.get("/players/eve", params={"before": HOSTILE}),  # 422, echoing the value
        http.post("/register", data={"name": HOSTILE, "password": "p" * 8, "timezone": HOSTILE}),
        http.post("/timezone", data={"name": "eve", "password": "wrong", "timezone": HOSTILE}),
    ]
    assert [p.status_code for p in pages] == [200, 200, 200, 404, 422, 422, 401]
    for page in pages:
        assert page.headers["content-type"].startswith("text/html")
        assert "<script>alert" not in page.text and "<img src=x" not in page.text, page.url
        scripts = re.findall(r"<script[^>]*>", page.text)
        assert scripts in ([], ["<script>"]), scripts  # only the page's own, allowed by hash
        csp = page.headers["content-security-policy"]
        assert "'unsafe-inline'" not in csp.split("script-src", 1)[1].split(";", 1)[0]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in pages[0].text  # the comment, as text


PWN = '<img src=x onerror="window.pwned=1">'


@pytest.mark.browser
def test_the_camera_page_shows_a_hostile_players_name_and_messages_as_text(service, chromium):
    """Held up: a name another device started games under, and the service's answers that echo
    it, are written into the camera page as text (Debian's chromium)."""
    from playwright.sync_api import expect

    for game in ("morning-roll", "greed"):  # open games of another device, one with a roll
        r = service.post("/api/v1/turns", json={"player": PWN, "game": game})
        assert r.status_code == 201, r.text
    r = service.post(f"/api/v1/turns/{r.json()['id']}/rolls", json={"values": [1, 1, 1, 5, 2]})
    assert r.status_code == 200, r.text
    page = chromium.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(str(service.base_url) + "/")
    page.fill("#player", PWN)
    page.dispatch_event("#player", "change")
    resume = page.locator("#open-games-list button")
    expect(resume).to_have_count(2)
    resume.filter(has_text="greed").click()
    expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_keep")
    expect(page.locator("#message")).to_contain_text(f"Resumed {PWN}'s turn")
    page.fill("#typed", "1 2 3")  # a roll the turn does not allow: the service's 422, shown
    page.press("#typed", "Enter")
    expect(page.locator("#message")).not_to_be_empty()
    assert page.evaluate("window.pwned") is None
    assert page.locator("img[src=x]").count() == 0
    assert errors == []
