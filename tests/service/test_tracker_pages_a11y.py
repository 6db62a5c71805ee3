"""The tracker's pages on a phone and to a screen reader or keyboard user, in a real chromium at
360x640: nothing scrolls the page sideways, targets are 44 px high, text is 12 px or more and
4.5:1 against its background (computed from the browser's styles), tables, forms and photos are
named for a screen reader, form mistakes are tied to their inputs and announced, and a player's
name is text wherever it is shown."""

from __future__ import annotations

import base64
import io
import re
import uuid
from html.parser import HTMLParser
from types import SimpleNamespace

import httpx
import pytest

from service.tracker import create_app, store
from service.tracker.schemas import Registration, TurnIn
from service.tracker.throttle import LoginGuard

pytestmark = [pytest.mark.browser]

ODD = "Zoe <b>\"x\" & 'q'"
"""A player whose name is markup, quotes and all (registered past the name check, as an older
database or an administrator's import may hold one)."""

PHONE = {"width": 360, "height": 640}
PASSWORD = "hunter2hunter2"
"""The seeded players' password (``seed_players``, ``password_hash``)."""

PROBE = """() => {
  const problems = [], say = (m) => problems.push(m), de = document.documentElement;
  const shown = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden";
  const what = (el) => el.outerHTML.slice(0, 80);
  if (de.scrollWidth > de.clientWidth) say(`page scrolls sideways: ${de.scrollWidth}px`);
  if (de.lang !== "en") say("no lang on <html>");
  if (!/width=device-width/.test(document.querySelector("meta[name=viewport]")?.content)) say("no viewport meta");
  const h1 = [...document.querySelectorAll("h1")].filter(shown);
  if (h1.length !== 1) say(`${h1.length} h1 shown`);
  const ids = [...document.querySelectorAll("[id]")].map((e) => e.id);
  for (const id of new Set(ids)) if (ids.indexOf(id) !== ids.lastIndexOf(id)) say(`id ${id} twice`);
  for (const el of document.querySelectorAll("main b, main i, main script, title *")) say(`markup from data: ${what(el)}`);
  for (const el of document.querySelectorAll("a, button, input:not([type=hidden]), summary")) {
    if (shown(el) && el.getBoundingClientRect().height < 43.5) say(`target ${el.getBoundingClientRect().height}px high: ${what(el)}`);
  }
  for (const el of document.querySelectorAll("body *")) {
    const cs = getComputedStyle(el);
    if (["auto", "scroll"].includes(cs.overflowX) && el.scrollWidth > el.clientWidth &&
        (el.tabIndex < 0 || !el.getAttribute("aria-labelledby"))) say(`scrolling box not named or not focusable: ${what(el)}`);
  }
  const rgba = (s) => { const m = s.match(/[\\d.]+/g).map(Number); return [m[0], m[1], m[2], m.length > 3 ? m[3] : 1]; };
  const over = (top, under) => [0, 1, 2].map((i) => top[i] * top[3] + under[i] * (1 - top[3])).concat(1);
  const lum = (c) => c.slice(0, 3).map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT), seen = new Set();
  while (walker.nextNode()) {
    const el = walker.currentNode.parentElement;
    if (!walker.currentNode.textContent.trim() || seen.has(el) || !shown(el)) continue;
    seen.add(el);
    const cs = getComputedStyle(el), layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) layers.unshift(c);
      if (c[3] >= 1) break;
    }
    const bg = layers.reduce((under, c) => over(c, under), [255, 255, 255, 1]), fg = over(rgba(cs.color), bg);
    const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a), ratio = (hi + 0.05) / (lo + 0.05);
    if (ratio < 4.5) say(`contrast ${ratio.toFixed(2)}: ${what(el)}`);
    if (parseFloat(cs.fontSize) < 12) say(`text ${cs.fontSize}: ${what(el)}`);
  }
  for (const t of document.querySelectorAll("table")) if (!t.caption?.textContent.trim()) say("table without a caption");
  for (const th of document.querySelectorAll("th")) if (!["col", "row"].includes(th.getAttribute("scope"))) say(`no scope: ${what(th)}`);
  for (const c of document.querySelectorAll("td, th")) {
    if (/^\\d+$/.test(c.textContent.trim()) && getComputedStyle(c).textAlign !== "right") say(`number on the left: ${what(c)}`);
  }
  for (const img of document.querySelectorAll("img")) if (!img.alt.trim()) say(`no alt: ${what(img)}`);
  for (const input of document.querySelectorAll("input:not([type=hidden])")) {
    const label = input.labels[0]?.textContent || "";
    if (!label) say(`no label: ${what(input)}`);
    if (input.required !== /\\(required\\)/.test(label)) say(`required not marked: ${what(input)}`);
    const want = {name: "username", password: input.form.action.endsWith("/register") ? "new-password" : "current-password"}[input.name];
    if (want && input.autocomplete !== want) say(`autocomplete ${input.autocomplete || "none"}: ${what(input)}`);
  }
  return problems;
}"""
"""Every problem a phone or screen reader user would meet on the page shown, in words."""


def jpeg() -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (160, 120), (30, 110, 60)).save(buf, "JPEG")
    return buf.getvalue()


def add_roll(url: str, name: str, score: str, **fields: str) -> httpx.Response:
    key = (
        httpx.get(url + "/add", timeout=30)
        .text.split('name="idempotency_key" value="')[1]
        .split('"')[0]
    )
    data = {"name": name, "password": PASSWORD, "score": score, "idempotency_key": key}
    return httpx.post(url + "/add", data={**data, **fields}, timeout=30)


def store_turn(app, name: str, score: int, **fields) -> None:
    """A turn stored for ``name`` at the app's clock, past the password check (seeding)."""
    with app.state.sessionmaker() as session:
        player = store.get_player(session, name)
        key = str(uuid.uuid4())
        turn = TurnIn(player=name, score=score, idempotency_key=key, **fields)
        store.submit_turn(session, player, turn, app.state.clock())
        session.commit()


@pytest.fixture
def site(sqlite_url, clock, serve, password_hash):
    """A tracker with two rounds, a turn with a photo, a long comment and a long reading, one
    entered by hand, and the player :data:`ODD`: its url and app."""
    clock.set("2025-06-01T12:00:00+00:00")
    app = create_app(sqlite_url, clock=clock)
    with app.state.sessionmaker() as session:
        for name in ("heather", "Bartholomew_Longname-The.Third", ODD):
            reg = Registration.model_construct(name=name, password=PASSWORD, timezone="UTC")
            store.register(session, reg, clock(), password_hash=password_hash)
        session.commit()
    store_turn(app, "heather", 300)  # turn 1, round 2025
    clock.set("2026-10-10T12:00:00+00:00")
    roll = {
        "values": [1, 2, 2, 3, 5, 6],
        "reading": {"dice": [{"value": 1, "note": "z" * 200}]},
        "photo_jpeg_b64": base64.b64encode(jpeg()).decode(),
    }
    store_turn(app, "heather", 600, comment="a" * 150, rolls=[roll])  # turn 2
    store_turn(app, "Bartholomew_Longname-The.Third", 1500, comment="a" * 150, rolls=[roll])
    store_turn(app, ODD, 50, comment="<i>hi</i>")  # turn 4
    yield SimpleNamespace(url=serve(app).url, app=app)
    app.state.db.dispose()


PAGES = [
    "/",
    "/rounds/2025",
    "/rollcall",
    "/players/heather",
    "/players/" + ODD,
    "/turns/1",
    "/turns/2",
    "/turns/4",
    "/add",
    "/register",
    "/turns/99",
]


def test_every_page_works_on_a_phone_and_with_a_screen_reader(chromium, site):
    page = chromium.new_page(viewport=PHONE, timezone_id="UTC")  # 12:00: the game is shown
    for path in PAGES:
        page.goto(site.url + path)
        assert page.evaluate(PROBE) == [], path
    assert page.title() == "Not found - Morning Roll"
    page.goto(site.url + "/turns/4")
    assert page.title() == f"{ODD}'s turn of 2026-10-10 - Morning Roll"
    assert page.locator("h1").inner_text() == f"{ODD}'s turn of 2026-10-10"
    page.goto(site.url + "/players/" + ODD)
    assert page.locator("caption").inner_text() == f"{ODD}'s turns"
    assert page.locator("td.text").inner_text() == "<i>hi</i>"
    page.goto(site.url + "/turns/2")
    alt = page.get_attribute("img.photo", "alt")
    assert alt == "Photo of roll 1 of heather's turn, read as 1, 2, 2, 3, 5, 6"
    page.goto(site.url + "/")
    assert page.title() == "Round 2026 leaderboard - Morning Roll"
    assert page.locator("caption").inner_text() == "Standings of round 2026"
    heads = page.locator("thead th").all_inner_texts()
    assert heads == ["Rank", "Player", "Total", "Turns", "Best", "Latest turn"]
    assert page.locator("tbody th[scope=row]").all_inner_texts()[:2] == [
        "Bartholomew_Longname-The.Third",
        "heather",
    ]
    page.keyboard.press("Tab")  # the keyboard's focus is seen
    focused = page.evaluate(
        "(() => { const s = getComputedStyle(document.activeElement);"
        " return [document.activeElement.textContent, s.outlineStyle, parseFloat(s.outlineWidth)]"
        " })()"
    )
    assert focused[0] == "Leaderboard" and focused[1] != "none" and focused[2] >= 2


def test_outside_8am_to_8pm_the_page_says_why_to_a_screen_reader(chromium, site):
    page = chromium.new_page(viewport=PHONE, timezone_id="Pacific/Kiritimati")  # 02:00 there
    page.goto(site.url + "/players/heather")
    assert not page.locator("#game").is_visible()
    assert page.title() == "Closed until 8am: heather's turns - Morning Roll"
    status = page.get_by_role("status")
    assert "shown from 8am to 8pm your time" in status.inner_text()
    assert page.get_by_role("heading", level=1).inner_text() == "heather's turns"
    assert page.get_by_role("main").count() == 1
    assert page.evaluate(PROBE) == []


def test_a_form_with_mistakes_ties_each_to_its_input_and_keeps_what_was_typed(chromium, site):
    page = chromium.new_page(viewport=PHONE, timezone_id="UTC")
    page.goto(site.url + "/add")
    page.fill("#name", "heather")
    page.fill("#password", "not-the-password")
    page.fill("#score", "500")
    page.fill("#comment", "a good one")
    page.click("button")
    assert page.title() == "Error: Add roll - Morning Roll"
    assert "wrong player name or password" in page.get_by_role("alert").inner_text()
    assert page.evaluate("document.activeElement.id") == "name"  # read first, with its error
    for field in ("name", "password"):
        assert page.get_attribute(f"#{field}", "aria-invalid") == "true"
        described = page.get_attribute(f"#{field}", "aria-describedby")
        assert "wrong player name or password" in page.locator(f"#{described}").inner_text()
    values = [page.input_value(f"#{f}") for f in ("name", "password", "score", "comment")]
    assert values == ["heather", "", "500", "a good one"]
    assert page.evaluate(PROBE) == []

    page.goto(site.url + "/register")
    page.fill("#name", "mike")
    page.fill("#password", "short")
    page.fill("#timezone", "Mars/Olympus")
    page.evaluate("document.querySelector('form').noValidate = true")  # the server's answer
    page.click("button")
    assert page.title() == "Error: Register - Morning Roll"
    assert page.get_attribute("#name", "aria-invalid") is None
    for field, words in (("password", "at least 8 characters"), ("timezone", "Mars/Olympus")):
        ids = page.get_attribute(f"#{field}", "aria-describedby").split()
        assert words in page.locator(f"#{ids[-1]}").inner_text()
        assert page.get_attribute(f"#{field}", "aria-invalid") == "true"
    assert [page.input_value(f"#{f}") for f in ("name", "timezone")] == ["mike", "Mars/Olympus"]
    assert page.evaluate("document.activeElement.id") == "password"
    assert page.evaluate(PROBE) == []


VOID = {"meta", "input", "img", "br", "hr", "link"}


class Balance(HTMLParser):
    """Every element closed in order (void ones aside), each id once."""

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.ids: list[str] = []
        self.problems: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.ids += [v for k, v in attrs if k == "id"]
        if tag not in VOID:
            self.open.append(tag)

    def handle_endtag(self, tag):
        if not self.open or self.open.pop() != tag:
            self.problems.append(f"</{tag}> closes nothing open ({self.open})")


def test_pages_are_well_formed_and_hold_names_as_text(site):
    for path in [*PAGES, "/rounds/1800", "/players/nobody"]:
        html = httpx.get(site.url + path, timeout=30).text
        checker = Balance()
        checker.feed(html)
        assert checker.problems == [] and checker.open == [], path
        assert len(checker.ids) == len(set(checker.ids)), (path, checker.ids)
        assert "<b>" not in html and "<i>" not in html, path
    title = re.search(
        r"<title>(.*)</title>", httpx.get(site.url + "/players/" + ODD, timeout=30).text
    )[1]
    assert title == "Zoe &lt;b&gt;&quot;x&quot; &amp; &#x27;q&#x27;&#x27;s turns - Morning Roll"


def test_a_form_sent_short_comes_back_as_the_form_and_a_wait_says_how_long(site):
    r = httpx.post(site.url + "/add", data={"name": "heather", "comment": "kept"}, timeout=30)
    assert r.status_code == 401 and 'id="comment"' in r.text and 'value="kept"' in r.text
    r = httpx.post(site.url + "/register", data={"name": "newcomer"}, timeout=30)
    assert r.status_code == 422 and 'value="newcomer"' in r.text and "<form" in r.text
    site.app.state.login_guard = LoginGuard(max_failures=1)
    add_roll(site.url, "heather", "50", password="wrong-password")
    r = add_roll(site.url, "heather", "50", comment="still here")
    assert r.status_code == 429 and int(r.headers["retry-after"]) > 0
    assert "too many wrong passwords" in r.text and 'value="still here"' in r.text
