"""House rules on the camera page at their edges, in Debian's chromium (Playwright) against a
real service: after a reload the controls show the rules chosen (not the game's), a rule set back
to the game's is "as written" again, a number that is not a whole number above 0 is refused and
the one in use shown again, and rules remembered on the phone that this page cannot use (not
JSON, not an object, a value of the wrong type) are left out rather than breaking the page."""

from __future__ import annotations

import json

import pytest

from service.app import create_app
from service.settings import Settings

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def url(tmp_path, serve) -> str:
    return serve(create_app(Settings(data_dir=tmp_path), tracker_app=None, submitter=None)).url


def test_the_controls_show_the_rules_chosen_and_refuse_a_target_that_is_no_count(chromium, url):
    from playwright.sync_api import expect

    page = chromium.new_context(viewport={"width": 390, "height": 844}).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url + "/")
    summary = page.locator("#rules-summary")
    page.click("#house-rules summary")
    page.check("#rule-three_pairs_any")
    page.select_option("#game", "low-high")
    page.select_option("#rule-scoring", "pips")
    page.fill("#rule-target", "40")
    page.dispatch_event("#rule-target", "change")
    chosen = "Score by: Pips of the dice left, Points to win: 40"
    expect(summary).to_have_text(chosen)

    page.reload()  # the rules as chosen, not as written
    page.select_option("#game", "low-high")
    page.click("#house-rules summary")
    expect(page.locator("#rule-scoring")).to_have_value("pips")
    expect(page.locator("#rule-target")).to_have_value("40")
    for wrong in ("0", "2.5", "-3"):  # not a count of points: refused, 40 shown again
        page.fill("#rule-target", wrong)
        page.dispatch_event("#rule-target", "change")
        expect(page.locator("#rule-target")).to_have_value("40")
        expect(summary).to_have_text(chosen)
    page.select_option("#rule-scoring", "dice")  # back to the game's: not said
    expect(summary).to_have_text("Points to win: 40")

    page.select_option("#game", "morning-roll")
    expect(page.locator("#rule-three_pairs_any")).to_be_checked()
    page.uncheck("#rule-three_pairs_any")  # set back to the game's: as written again
    expect(summary).to_have_text("as written")
    page.fill("#player", "ann")
    page.click("#new-turn")
    expect(page.locator("#message")).to_have_text("ann: roll 6 dice.")
    assert not errors, errors


def test_rules_remembered_that_the_page_cannot_use_are_left_out(chromium, url):
    from playwright.sync_api import expect

    page = chromium.new_context(viewport={"width": 390, "height": 844}).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url + "/")
    remembered = {
        "morning-roll": "{not json",
        "farkle-five": "null",
        "low-high": json.dumps({"scoring": "pips", "target": "40", "cancel": 1}),
    }
    page.evaluate(
        "saved => { for (const [g, v] of Object.entries(saved))"
        " localStorage.setItem(`dicecam.rules.${g}`, v); }",
        remembered,
    )
    page.reload()
    summary = page.locator("#rules-summary")
    expect(summary).to_have_text("as written")
    expect(page.locator("#rule-three_pairs_any")).not_to_be_checked()
    page.select_option("#game", "farkle-five")
    expect(summary).to_have_text("as written")
    expect(page.locator("#rule-free_keep")).not_to_be_checked()
    page.select_option("#game", "low-high")  # the values of the right type are kept
    expect(summary).to_have_text("Score by: Pips of the dice left")
    expect(page.locator("#rule-target")).to_have_value("30")
    expect(page.locator("#rule-cancel")).to_have_value("ascending")
    page.fill("#player", "ann")
    with page.expect_request(lambda r: r.method == "POST" and "/low-high/" in r.url) as sent:
        page.click("#new-turn")
    assert json.loads(sent.value.post_data)["rules"] == {"scoring": "pips"}
    expect(page.locator("#message")).to_contain_text("ann: roll 13 dice")
    assert not errors, errors
