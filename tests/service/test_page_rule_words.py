"""The camera page's house rules and bare errors in a player's words: every house rule of every
game has a label and a hint served by GET /api/v1/games, the page (Debian's chromium under
Playwright) shows them instead of the rule's key, and an error answer without the service's
sentence (a proxy's "502 Bad Gateway" page) is said as a sentence that keeps its status."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest

from scoring import HOUSE_RULES
from service.app import create_app
from service.settings import Settings


@pytest.fixture
def url(tmp_path: Path, serve) -> str:
    app = create_app(Settings(data_dir=tmp_path), tracker_app=None, submitter=None)
    return serve(app).url


def key_words(key: str) -> str:
    return key.replace("_", " ").lower()


def test_every_house_rule_of_every_game_has_a_label_and_a_hint(url):
    games = httpx.get(url + "/api/v1/games", timeout=30).json()
    labels, hints = games["house_rule_labels"], games["house_rule_hints"]
    assert set(labels) == set(hints) == set(games["games"])
    assert any(games["house_rules"].values())  # the games have house rules to name
    for game, rules in games["house_rules"].items():
        assert set(labels[game]) == set(rules) == set(HOUSE_RULES[game]), game
        assert set(hints[game]) == set(rules), game
        for key in rules:
            label, hint = labels[game][key], hints[game][key]
            assert label.strip() and label.lower() != key_words(key), (game, key, label)
            assert len(label) <= 30, (game, key, label)  # a label, not a paragraph
            assert hint.strip() and len(hint) <= 140, (game, key, hint)  # one line


@pytest.mark.browser
@pytest.mark.slow
def test_the_page_shows_the_house_rules_in_words_not_their_keys(chromium, url):
    from playwright.sync_api import expect

    page = chromium.new_context(viewport={"width": 390, "height": 844}).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url + "/")
    expect(page.locator("#house-rules")).to_be_visible()
    page.click("#house-rules summary")
    rules = page.locator("#rules-list")
    expect(rules).to_contain_text("Any three pairs are boxcars")
    expect(rules).to_contain_text("Four of a kind with a pair, or six of a kind, score 2500")
    assert "three pairs any" not in rules.inner_text().lower()
    rule = page.locator("#rule-three_pairs_any")
    expect(rule).to_have_accessible_name("Any three pairs are boxcars")
    expect(rule).to_have_accessible_description(re.compile(r"score 2500 .*\(as written: "))

    page.check("#rule-three_pairs_any")
    expect(page.locator("#rules-summary")).to_have_text("Any three pairs are boxcars")
    page.fill("#player", "ann")
    page.click("#new-turn")
    expect(page.locator("#message")).to_contain_text("house rules: Any three pairs are boxcars")

    page.select_option("#game", "low-high")
    for key, words in [
        ("scoring", "Score by"),
        ("cancel", "Cancel order (pips)"),
        ("target", "Points to win"),
    ]:
        expect(page.locator(f"#rule-{key}")).to_have_accessible_name(words)
    target = page.locator("#rule-target")  # wide enough to show its number, not a checkbox's
    expect(target).to_have_value("30")
    assert target.bounding_box()["width"] >= 48, target.bounding_box()
    page.select_option("#rule-scoring", "pips")
    page.fill("#rule-target", "40")
    page.dispatch_event("#rule-target", "change")
    expect(page.locator("#rules-summary")).to_have_text(
        "Score by: Pips of the dice left, Points to win: 40"
    )
    assert not errors, errors


def test_every_value_of_a_rule_of_text_has_a_players_name(url):
    games = httpx.get(url + "/api/v1/games", timeout=30).json()
    choices, names = games["house_rule_choices"], games["house_rule_choice_labels"]
    assert set(names) == set(games["games"])
    assert any(choices.values())  # Low-High's scoring and cancel order
    for game, rules in choices.items():
        assert set(names[game]) == set(rules), game
        for key, values in rules.items():
            assert set(names[game][key]) == set(values), (game, key)
            said = list(names[game][key].values())
            assert len(set(said)) == len(said), (game, key, said)  # told apart
            for value, name in names[game][key].items():
                assert name.strip() and len(name) <= 30, (game, key, name)
                assert name.lower() != value, (game, key, name)


@pytest.mark.browser
@pytest.mark.slow
def test_the_low_high_menus_show_words_and_send_the_values(chromium, url):
    """The menus listed "dice", "pips", "ascending", "descending": the service's values."""
    from playwright.sync_api import expect

    page = chromium.new_context(viewport={"width": 390, "height": 844}).new_page()
    page.goto(url + "/")
    page.select_option("#game", "low-high")
    page.click("#house-rules summary")
    for key, options in [
        ("scoring", ["Dice left, 1 point each", "Pips of the dice left"]),
        ("cancel", ["Lowest good dice first", "Highest good dice first"]),
    ]:
        menu = page.locator(f"#rule-{key}")
        expect(menu.locator("option")).to_have_text(options)
    expect(page.locator("#rule-scoring")).to_have_value("dice")  # the game as written
    page.select_option("#rule-scoring", label="Pips of the dice left")
    page.select_option("#rule-cancel", label="Highest good dice first")
    expect(page.locator("#rules-summary")).to_have_text(
        "Score by: Pips of the dice left, Cancel order (pips): Highest good dice first"
    )
    page.fill("#player", "ann")
    with page.expect_request(lambda r: r.method == "POST" and "/api/v1/" in r.url) as sent:
        page.click("#new-turn")
    assert json.loads(sent.value.post_data)["rules"] == {"scoring": "pips", "cancel": "descending"}


@pytest.mark.browser
@pytest.mark.slow
def test_a_low_high_turn_says_its_house_rules_as_it_starts_as_a_farkle_turn_does(chromium, url):
    """A Low-High turn began with "ann: roll 13 dice." whatever the rules chosen."""
    from playwright.sync_api import expect

    page = chromium.new_context(viewport={"width": 390, "height": 844}).new_page()
    page.goto(url + "/")
    page.fill("#player", "ann")
    page.select_option("#game", "low-high")
    page.click("#new-turn")  # as written: nothing to say
    message = page.locator("#message")
    expect(message).to_have_text("ann: roll 13 dice.")
    page.click("#house-rules summary")
    page.select_option("#rule-scoring", label="Pips of the dice left")
    page.fill("#rule-target", "40")
    page.dispatch_event("#rule-target", "change")
    page.click("#new-turn")  # the turn as written, not rolled yet, is left without asking
    expect(message).to_have_text(
        "ann: roll 13 dice (house rules: Score by: Pips of the dice left, Points to win: 40)."
    )
    page.fill("#typed", "1 2 3 4 5 6 1 2 3 4 5 6 6")
    page.click("#typed-form button")  # once rolled, the rules are not said again
    expect(message).not_to_contain_text("house rules")


@pytest.mark.browser
@pytest.mark.slow
def test_a_rule_the_service_gives_no_label_is_named_by_its_key(chromium, url):
    from playwright.sync_api import expect

    page = chromium.new_context(viewport={"width": 390, "height": 844}).new_page()

    def unlabelled(route) -> None:  # a service from before the labels
        games = route.fetch().json()
        del games["house_rule_labels"], games["house_rule_hints"]
        route.fulfill(json=games)

    page.route("**/api/v1/games", unlabelled)
    page.goto(url + "/")
    page.click("#house-rules summary")
    expect(page.locator("label", has=page.locator("#rule-three_pairs_any"))).to_have_text(
        "three pairs any"
    )
    expect(page.locator("#rules-list .hint")).to_have_count(0)


@pytest.mark.browser
@pytest.mark.slow
def test_an_error_answer_without_the_services_sentence_is_said_in_words(chromium, url):
    from playwright.sync_api import expect

    page = chromium.new_context(viewport={"width": 390, "height": 844}).new_page()
    page.goto(url + "/")
    proxy_page = "<html><body><h1>502 Bad Gateway</h1></body></html>"
    page.route(
        "**/api/v1/score*",
        lambda route: route.fulfill(status=502, content_type="text/html", body=proxy_page),
    )
    page.fill("#typed", "1 2 3 4 6 6")
    page.click("#typed-form button")
    message = page.locator("#message")
    expect(message).to_have_text(
        "The dicecam service did not answer properly (502): try again in a moment."
    )
    assert "Bad Gateway" not in message.inner_text()

    page.unroute("**/api/v1/score*")  # JSON without a detail says the same; a detail is kept
    page.route(
        "**/api/v1/score*",
        lambda route: route.fulfill(status=503, json={"status": "starting"}),
    )
    page.click("#typed-form button")
    expect(message).to_have_text(
        "The dicecam service did not answer properly (503): try again in a moment."
    )
    page.unroute("**/api/v1/score*")
    page.route(
        "**/api/v1/score*",
        lambda route: route.fulfill(status=422, body=json.dumps({"detail": "six dice, please"})),
    )
    page.click("#typed-form button")
    expect(message).to_have_text("six dice, please")
