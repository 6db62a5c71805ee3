"""The games' registry: the titles players read, what an unknown name is told, and house rules
written KEY=VALUE (the CLI's ``--rule``, the API's ``rule``)."""

import pytest

from scoring import GAME_NAMES, get_advisor, get_game, parse_house_rules, unknown_game
from scoring.games import GAME_TITLES, HOUSE_RULES


def test_each_game_is_titled_as_the_rule_readings_name_it():
    """READINGS.md heads each game's section with its name: "## Morning Roll
    (morning-roll.txt)", "## Five-dice Farkle (farkle-five-dice.txt)", "## Greed (greed.txt)",
    "## Solitaire Dice (solitaire-dice.txt)", "## Low-High (low-high.txt)"."""
    assert GAME_TITLES == {
        "morning-roll": "Morning Roll",
        "farkle-five": "Five-dice Farkle",
        "greed": "Greed",
        "solitaire-dice": "Solitaire Dice",
        "low-high": "Low-High",
    }
    assert list(GAME_TITLES) == list(GAME_NAMES)


def test_an_unknown_name_written_as_the_title_is_pointed_to_the_game():
    assert "(did you mean 'morning-roll'?)" in unknown_game("MORNING ROLL")
    assert "(did you mean 'greed'?)" in unknown_game(" Greed ")
    assert "(did you mean 'low-high'?)" in unknown_game("Low High")
    with pytest.raises(ValueError, match=r"unknown game 'Morning Roll' \(did you mean"):
        get_game("Morning Roll")


@pytest.mark.parametrize(
    ("text", "value"),
    [("true", True), ("Yes", True), ("ON", True), ("false", False), ("no", False), ("Off", False)],
)
def test_house_rule_switches_read_yes_no_on_off_as_true_false(text, value):
    assert parse_house_rules([f"three_pairs_any={text}"]) == {"three_pairs_any": value}
    assert get_game(
        "morning-roll", **parse_house_rules([f"three_pairs_any={text}"])
    ).house_rules == {"three_pairs_any": value}


def test_house_rule_keys_are_read_without_the_spaces_around_them():
    assert parse_house_rules([" three_pairs_any = true "]) == {"three_pairs_any": True}
    assert parse_house_rules(["scoring= Pips "]) == {"scoring": "Pips"}  # text as written


@pytest.mark.parametrize("pair", ["=true", " = 3", "free_keep"])
def test_a_house_rule_without_a_key_or_an_equals_sign_is_refused(pair):
    with pytest.raises(ValueError, match=f"expected a house rule as KEY=VALUE, got {pair!r}"):
        parse_house_rules(["free_keep=true", pair])


@pytest.mark.parametrize("name", GAME_NAMES)
def test_each_games_listed_house_rules_are_the_ones_it_plays_without_options(name):
    """HOUSE_RULES gives the defaults a menu shows; a game made with no options plays those
    (Low-High: "First to 30 wins", READINGS.md; M4 and F1 options off as written)."""
    assert get_game(name).house_rules == HOUSE_RULES[name]


def test_many_unknown_house_rules_are_named_five_and_counted():
    with pytest.raises(
        ValueError,
        match=r"^greed: unknown house rule\(s\) r0, r1, r2, r3, r4 and 3 more; valid: none$",
    ):
        get_game("greed", **{f"r{i}": 1 for i in range(8)})


@pytest.mark.parametrize("name", ["solitaire-dice", "low-high"])
def test_a_game_without_an_advisor_names_the_games_with_one(name):
    with pytest.raises(
        ValueError,
        match=f"^no strategy advisor for '{name}'; advisors exist for: "
        "morning-roll, farkle-five, greed$",
    ):
        get_advisor(name)


@pytest.mark.parametrize("value", ["--5", "5-", "\u00b2", "1e3"])
def test_a_house_rule_value_that_only_looks_like_a_number_is_kept_as_text(value):
    """'--5' and '²' (a digit to str.isdigit, not to int) raised int()'s "invalid literal for
    int() with base 10", naming neither the rule nor what it takes; now the game refuses the
    text and says what the rule takes."""
    rules = parse_house_rules([f"target={value}", "scoring=pips", "free=-12"])
    assert rules == {"target": value, "scoring": "pips", "free": -12}
    with pytest.raises(ValueError, match=f"target must be a positive integer, got '{value}'"):
        get_game("low-high", target=rules["target"])
    with pytest.raises(
        ValueError, match=f"house rule free_keep must be true or false, got '{value}'"
    ):
        get_game("farkle-five", **parse_house_rules([f"free_keep={value}"]))
