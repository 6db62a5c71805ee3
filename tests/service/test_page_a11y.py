"""The camera page for a player on a phone, with a screen reader, or with a keyboard alone
(Debian's chromium under Playwright): it fits 360x640, 390x844 and 844x390 screens, its controls
are large enough to tap, its text is readable with enough contrast, every control and picture
has a name, readings and scores are announced, focus is visible and follows each action, a whole
turn is played by keyboard, and it names the model that reads the dice.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from service.app import create_app
from service.settings import Settings
from vision import Die

from dicecam_testing.page import (
    DrawnRoll,
    TruthReader,
    chromium_or_skip,
    launch,
    photo,
    truth_dice,
    write_y4m,
)
from dicecam_testing.servers import LiveServer

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PHONES = [(360, 640), (390, 844), (844, 390)]

# What a player on a phone meets on screen: overflow, small targets, small text, low contrast,
# a camera view taller than the screen left beside a sticky header. Colours are composited
# through the element's ancestors (backgrounds and opacity); disabled controls are exempt from
# the contrast rule (WCAG 1.4.3).
LAYOUT_JS = """() => {
  const shown = (e) => { const r = e.getBoundingClientRect();
    return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden'; };
  const rgba = (c) => { const v = c.match(/[\\d.]+/g).map(Number); return v.length === 3 ? [...v, 1] : v; };
  const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)]; return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  const over = (top, base) => top.slice(0, 3).map((v, i) => v * top[3] + base[i] * (1 - top[3]));
  const background = (e) => { const layers = [];
    for (let n = e; n; n = n.parentElement) { const c = rgba(getComputedStyle(n).backgroundColor);
      if (c[3] > 0) layers.push(c); if (c[3] === 1) break; }
    return layers.reverse().reduce((base, c) => over(c, base), [255, 255, 255]); };
  const opacity = (e) => { let o = 1; for (let n = e; n; n = n.parentElement) o *= Number(getComputedStyle(n).opacity); return o; };
  const name = (e) => `${e.tagName.toLowerCase()}#${e.id || ''}.${e.className || ''} "${e.textContent.trim().slice(0, 24)}"`;
  const out = { overflow: [], small: [], tiny: [], faint: [], stage: null };
  const vw = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth > vw) out.overflow.push(`page ${document.documentElement.scrollWidth} > ${vw}`);
  for (const e of document.body.querySelectorAll('*')) {
    if (!shown(e)) continue;
    const r = e.getBoundingClientRect();
    if (r.right > vw + 0.5 && !e.closest('dialog')) out.overflow.push(`${name(e)} right ${r.right.toFixed(0)}`);
  }
  for (const e of document.querySelectorAll('button, a[href], input, select, textarea, summary, [tabindex]')) {
    if (!shown(e)) continue;
    const target = ['checkbox', 'radio'].includes(e.type) && e.closest('label') || e;
    const r = target.getBoundingClientRect();
    if (r.width < 43.5 || r.height < 43.5) out.small.push(`${name(target)} ${r.width.toFixed(0)}x${r.height.toFixed(0)}`);
  }
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const seen = new Set();
  while (walker.nextNode()) {
    const e = walker.currentNode.parentElement;
    if (!walker.currentNode.textContent.trim() || seen.has(e) || !shown(e)) continue;
    seen.add(e);
    const cs = getComputedStyle(e);
    if (parseFloat(cs.fontSize) < 12) out.tiny.push(`${name(e)} ${cs.fontSize}`);
    if (e.closest('button:disabled, select:disabled, input:disabled')) continue;
    const bg = background(e); const fg = rgba(cs.color);
    const seenFg = over([...fg.slice(0, 3), fg[3] * opacity(e)], bg);
    const r = ratio(seenFg, bg);
    if (r < 4.5) out.faint.push(`${name(e)} ${r.toFixed(2)}:1`);
  }
  const header = document.querySelector('header');
  const covered = getComputedStyle(header).position === 'sticky' ? header.getBoundingClientRect().height : 0;
  const stage = document.getElementById('stage').getBoundingClientRect();
  if (stage.height > window.innerHeight - covered + 0.5)
    out.stage = `camera view ${stage.height.toFixed(0)} px tall, ${(window.innerHeight - covered).toFixed(0)} px to show it in`;
  return out;
}"""

# The outline of the focused element and the contrast of its colour with what lies around it.
FOCUS_JS = """() => {
  const e = document.activeElement; if (!e || e === document.body) return null;
  const cs = getComputedStyle(e);
  const rgba = (c) => { const v = c.match(/[\\d.]+/g).map(Number); return v.length === 3 ? [...v, 1] : v; };
  const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
  let bg = [255, 255, 255];
  for (let n = e.parentElement; n; n = n.parentElement) { const c = rgba(getComputedStyle(n).backgroundColor);
    if (c[3] === 1) { bg = c; break; } }
  const oc = rgba(cs.outlineColor);
  const [a, b] = [lum(oc), lum(bg)];
  return { id: e.id || e.textContent.trim(), style: cs.outlineStyle, width: parseFloat(cs.outlineWidth),
           contrast: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05) };
}"""


def serve_page(tmp_path: Path, reader: TruthReader | None = None):
    """The service with ``reader`` (a scripted one by default) and its fake camera's video."""
    sample = DrawnRoll()
    video = write_y4m(sample.image, tmp_path / "roll.y4m")
    app = create_app(
        Settings(data_dir=tmp_path),
        reader=reader if reader is not None else TruthReader([]),
        tracker_app=None,
        submitter=None,
    )
    return sample, video, app


def off_table_roll(sample: DrawnRoll) -> list[Die]:
    """The drawn roll, left to right, its third die off the table."""
    truth = sorted(truth_dice(sample), key=lambda d: d.box[0])
    return [Die(d.value, d.box, 0.9, on_table=(i != 2)) for i, d in enumerate(truth)]


def upload(page, selector: str, sample: DrawnRoll, quality: int) -> None:
    page.set_input_files(
        selector,
        files=[{"name": "roll.jpg", "mimeType": "image/jpeg", "buffer": photo(sample, quality)}],
    )


def test_the_page_fits_a_phone_and_its_text_and_targets_are_readable_and_tappable(tmp_path):
    from playwright.sync_api import expect, sync_playwright

    chromium_or_skip()
    reader = TruthReader([])
    sample, video, app = serve_page(tmp_path, reader)
    reader.dice = off_table_roll(sample)
    with LiveServer(app) as server, sync_playwright() as p:
        browser = launch(p, video)
        context = browser.new_context(
            viewport={"width": 360, "height": 640},
            is_mobile=True,
            has_touch=True,
            reduced_motion="reduce",
        )
        page = context.new_page()
        page.goto(server.url + "/")
        page.fill("#player", "ada")
        page.click("#new-turn")  # a turn to the bank: its receipt is shown in green
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
        page.fill("#typed", "1 1 1 5 5 2")
        page.click("#typed-form button")
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_keep")
        page.locator("#keeps li button").first.click()
        page.click("#bank")
        expect(page.locator("#message")).to_contain_text("Banked")
        upload(page, "#file", sample, 80)  # a reading with a die off the table (in red)
        expect(page.locator("#dice .die.off")).to_have_count(1)
        page.click("#house-rules summary")
        page.click("#tracker summary")
        upload(page, "#calib-file", sample, 81)  # the calibration tools
        expect(page.locator("#calib-editor")).to_be_visible()
        problems = []
        for width, height in PHONES:
            page.set_viewport_size({"width": width, "height": height})
            page.locator("#stage").scroll_into_view_if_needed()
            found = page.evaluate(LAYOUT_JS)
            problems += [
                f"{width}x{height} {what}: {items}" for what, items in found.items() if items
            ]
        assert not problems, "\n".join(problems)
        moving = page.evaluate(
            """() => [...document.querySelectorAll('*')].filter((e) => {
                const s = getComputedStyle(e);
                return parseFloat(s.transitionDuration) > 0 || parseFloat(s.animationDuration) > 0;
            }).map((e) => e.id || e.tagName)"""
        )
        assert not moving, f"animated though the player asked for reduced motion: {moving}"
        browser.close()


CONTROL_ROLES = {
    "button",
    "textbox",
    "combobox",
    "checkbox",
    "spinbutton",
    "DisclosureTriangle",
    "image",
    "Canvas",
    "Video",
    "dialog",
    "slider",
    "radio",
}


def unnamed_controls(page) -> list[str]:
    """Controls and pictures chromium's accessibility tree gives no name."""
    cdp = page.context.new_cdp_session(page)
    nodes = cdp.send("Accessibility.getFullAXTree")["nodes"]
    cdp.detach()
    return [
        f"{n['role']['value']} (node {n.get('backendDOMNodeId')})"
        for n in nodes
        if not n.get("ignored")
        and n.get("role", {}).get("value") in CONTROL_ROLES
        and not str(n.get("name", {}).get("value", "")).strip()
    ]


def announced(page, selector: str) -> bool:
    """Whether ``selector`` lies in a live region (a screen reader reads its changes)."""
    return page.eval_on_selector(
        selector,
        "e => !!e.closest('[aria-live]:not([aria-live=off]), [role=status], [role=alert]')",
    )


def name_of(page, selector: str) -> str:
    """The accessible name chromium computes for the first element matching ``selector``."""
    cdp = page.context.new_cdp_session(page)
    node = cdp.send("DOM.getDocument")["root"]["nodeId"]
    node = cdp.send("DOM.querySelector", {"nodeId": node, "selector": selector})["nodeId"]
    ax = cdp.send("Accessibility.getPartialAXTree", {"nodeId": node, "fetchRelatives": False})
    cdp.detach()
    return str(ax["nodes"][0].get("name", {}).get("value", ""))


def test_controls_and_pictures_have_names_and_the_reading_and_score_are_announced(tmp_path):
    from playwright.sync_api import expect, sync_playwright

    chromium_or_skip()
    reader = TruthReader([])
    sample, video, app = serve_page(tmp_path, reader)
    reader.dice = off_table_roll(sample)
    with LiveServer(app) as server, sync_playwright() as p:
        browser = launch(p, video)
        page = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True)
        page.on("filechooser", lambda chooser: None)  # intercepted from the start, not racing
        page.goto(server.url + "/")
        assert page.get_attribute("html", "lang") == "en"
        page.click("#start-camera")
        expect(page.locator("#capture")).to_be_enabled()
        assert name_of(page, "#preview") == "live camera view"
        page.fill("#player", "ada")
        page.click("#new-turn")
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
        upload(page, "#file", sample, 80)
        expect(page.locator("#dice .die")).to_have_count(6)
        page.click("#house-rules summary")
        page.click("#tracker summary")
        with page.expect_file_chooser() as chooser:  # a button, as the camera's Photo… is
            page.click("#calib-pick")
        chooser.value.set_files(
            files=[{"name": "roll.jpg", "mimeType": "image/jpeg", "buffer": photo(sample, 81)}]
        )
        expect(page.locator("#calib-editor")).to_be_visible()
        assert unnamed_controls(page) == []

        # the dice read, in words: in a live region, on the photo, on each die
        assert announced(page, "#reading-note")
        expect(page.locator("#reading-note")).to_contain_text("6 dice: 5 3 2 1 2")
        expect(page.locator("#reading-note")).to_contain_text("1 off the table (1)")
        photo_name = name_of(page, "#photo")
        assert "5, 3, 1 off the table, 2, 1, 2" in photo_name, photo_name
        off = page.locator("#dice .die.off")
        assert name_of(page, "#dice .die.off") == "die 3: 1, off the table"
        tag = off.evaluate("e => getComputedStyle(e, '::after').content")
        assert tag == '"off"', f"an off-table die is told by its colour alone (::after {tag})"
        off.click()  # the picker is a named dialog
        expect(page.locator("#picker")).to_be_visible()
        assert name_of(page, "#picker") == "What does this die show?"
        page.keyboard.press("Escape")

        # errors and the score are announced too
        for note in ("#message", "#camera-note", "#tracker-note", "#calib-note"):
            assert announced(page, note), f"{note} is not announced"
        page.click("#use-roll")
        expect(page.locator("#message")).to_contain_text("Bust: 1 die left the table")
        browser.close()


def tab_to(page, selector: str, limit: int = 40) -> list[str]:
    """Press Tab until ``selector`` has the focus; each control passed on the way shows a focus
    ring (an outline at least 2 px wide, at 3:1 contrast with what surrounds it). Returns the
    controls whose ring is missing or faint."""
    faint = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        ring = page.evaluate(FOCUS_JS)
        if ring is None:  # past the last control (of the page, or of the open dialog)
            continue
        if ring["style"] == "none" or ring["width"] < 2 or ring["contrast"] < 3:
            faint.append(
                f"{ring['id']}: {ring['style']} {ring['width']}px {ring['contrast']:.1f}:1"
            )
        if page.evaluate("s => document.activeElement.matches(s)", selector):
            return faint
    raise AssertionError(f"{selector} not reached with {limit} presses of Tab")


def focused(page) -> str:
    return page.evaluate(
        "() => { const e = document.activeElement; return e.id || e.getAttribute('aria-label')"
        " || e.textContent.trim(); }"
    )


def test_a_turn_is_played_by_keyboard_alone_with_the_focus_shown_and_following(tmp_path):
    from playwright.sync_api import expect, sync_playwright

    chromium_or_skip()
    reader = TruthReader([])
    sample, video, app = serve_page(tmp_path, reader)
    reader.dice = sorted(truth_dice(sample), key=lambda d: d.box[0])  # 5 3 1 2 1 2
    with LiveServer(app) as server, sync_playwright() as p:
        browser = launch(p, video)
        page = browser.new_page(viewport={"width": 390, "height": 844})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("filechooser", lambda chooser: None)  # intercepted from the start, not racing
        page.goto(server.url + "/")
        expect(page.locator("#game option")).to_have_count(5)
        faint = tab_to(page, "#player")
        page.keyboard.type("ada")
        page.keyboard.press("Enter")  # the turn form: a new turn
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_roll")
        assert focused(page) == "pick-photo", "a new turn leads to the roll's control"

        faint += tab_to(page, "#typed")  # every control of the page on the way
        page.keyboard.press("Shift+Tab")
        faint += tab_to(page, "#pick-photo", limit=60)  # ... and round again to Photo…
        with page.expect_file_chooser() as chooser:
            page.keyboard.press("Enter")
        chooser.value.set_files(
            files=[{"name": "roll.jpg", "mimeType": "image/jpeg", "buffer": photo(sample, 80)}]
        )
        expect(page.locator("#dice .die")).to_have_count(6)
        assert focused(page) == "die 1: 5", "after a read the focus is on the dice read"

        page.keyboard.press("Enter")  # the picker: the first die shows a 1
        expect(page.locator("#picker")).to_be_visible()
        faint += tab_to(page, "#picker button[value='1']")
        page.keyboard.press("Space")
        expect(page.locator("#dice .die.corrected")).to_have_text("1")
        assert focused(page) == "die 1: 1", "the focus comes back to the die corrected"

        faint += tab_to(page, "#use-roll")
        page.keyboard.press("Enter")
        expect(page.locator("#turn-state")).to_have_attribute("data-state", "awaiting_keep")
        best = page.locator("#keeps li button").first
        assert best.evaluate("b => b === document.activeElement"), "the best keep has the focus"
        name = name_of(page, "#keeps li button")  # its dice and points apart: not "1 11000 pts"
        assert name.startswith("Keep 1 1 1, 1000 pts"), name
        page.keyboard.press("Space")
        expect(page.locator("#bank")).to_be_enabled()
        assert focused(page) == "bank", "after a keep, Bank has the focus"
        total = page.inner_text("#turn-total")
        page.keyboard.press("Enter")
        expect(page.locator("#message")).to_contain_text(f"Banked {total} points")
        assert focused(page) == "new-turn", "a finished turn leads to the next one"
        assert not faint, f"focus not shown on: {faint}"
        assert not errors, errors
        browser.close()


def test_the_page_names_the_model_configured_and_announces_a_read_that_fails(tmp_path, monkeypatch):
    from playwright.sync_api import expect, sync_playwright

    chromium_or_skip()
    tuned = tmp_path / "runs" / "my-dice-ft.onnx"  # DICECAM_MODEL: not loaded until a photo
    monkeypatch.setenv("DICECAM_MODEL", str(tuned))
    sample = DrawnRoll()
    video = write_y4m(sample.image, tmp_path / "roll.y4m")
    app = create_app(Settings(data_dir=tmp_path), tracker_app=None, submitter=None)
    with LiveServer(app) as server, sync_playwright() as p:
        browser = launch(p, video)
        page = browser.new_page(viewport={"width": 360, "height": 640}, is_mobile=True)
        page.goto(server.url + "/")
        model = page.locator("#reader-model")
        expect(model).to_have_text("Reading with my-dice-ft.onnx")
        expect(model).to_have_attribute("title", str(tuned))
        upload(page, "#file", sample, 80)  # no such model file: the read fails, and says why
        expect(page.locator("#reading-note")).to_contain_text("my-dice-ft.onnx")
        assert announced(page, "#reading-note")
        browser.close()
