"""What the games take as dice and points: numpy integers (a reading's values often are), any
iterable once, never bools or floats."""

from __future__ import annotations

import numpy as np
import pytest

from scoring import SolitaireSheet, get_advisor, get_game, parse_house_rules
from scoring.dice import check_dice


def test_numpy_integers_are_dice_and_points():
    roll = np.array([1, 1, 1, 5, 2, 3])
    game = get_game("morning-roll")
    assert game.best_score(roll) == game.best_score([1, 1, 1, 5, 2, 3]) == 1050
    assert check_dice(roll) == (1, 1, 1, 2, 3, 5)
    assert all(type(v) is int for v in check_dice(roll))  # JSON-ready
    advice = get_advisor("morning-roll").advise([5, 1, 2], banked=np.int64(200))
    assert advice == get_advisor("morning-roll").advise([5, 1, 2], banked=200)
    sheet = SolitaireSheet()
    sheet.add_reject(np.int64(4))
    assert sheet.reject_faces == [4]


def test_a_generator_is_read_once():
    game = get_game("morning-roll")
    scored = game.score(v for v in [1, 5])  # it was checked twice: the second time empty
    assert scored["dice"] == [1, 5] and scored["max_points"] == 150


@pytest.mark.parametrize("bad", [True, 1.0, "1", None])
def test_bools_floats_and_strings_are_not_dice(bad):
    with pytest.raises(ValueError, match="a die face must be an integer 1 to 6"):
        check_dice([bad, 2, 3])
    with pytest.raises(ValueError, match="points kept this turn must be an integer"):
        get_advisor("morning-roll").advise([5, 1, 2], banked=bad)


@pytest.mark.parametrize("bad", [None, 5])
def test_a_roll_that_is_no_sequence_is_refused(bad):
    """None and a bare number raised a bare TypeError ('not iterable')."""
    with pytest.raises(ValueError, match=f"expected a sequence of die faces, got {bad}"):
        check_dice(bad)
    with pytest.raises(ValueError, match="greed: expected a sequence of die faces"):
        get_game("greed").keeps(bad)


def test_farkle_five_with_free_keeps_advises_exactly_under_the_50_rule():
    """Where a total ending in 50 cannot be banked (F2), a smaller keep can beat a larger one
    (keep the 5 alone to bank, or all five 5s to roll on); the advisor kept only the largest
    per kind and dice left, and advised banking 9000 where rolling on is worth 9004.6."""
    advice = get_advisor("farkle-five", free_keep=True).advise([5, 5, 5, 5, 5], banked=8950)
    assert (advice[0].keep, advice[0].then) == ((5, 5, 5, 5, 5), "roll")
    assert advice[0].expected == pytest.approx(9004.616, abs=0.01)


def test_a_farkle_five_game_banks_no_total_ending_in_50():
    from scoring import FarkleGame, ScoringError

    game = FarkleGame(get_game("farkle-five"), ["a", "b"])
    with pytest.raises(ScoringError, match="banks no total ending in 50"):
        game.record(550)
    assert game.record(600) == 600


def test_game_names_and_house_rules_of_the_wrong_type_are_refused():
    """get_game(['greed']) raised 'unhashable type'; parse_house_rules('a=1') read the
    string letter by letter and named 'a' as the bad item."""
    with pytest.raises(
        ValueError, match=r"unknown game \['greed'\] \(did you mean 'greed'\?\); expected one of"
    ):
        get_game(["greed"])
    with pytest.raises(ValueError, match="a list of KEY=VALUE house rules, got the string 'a=1'"):
        parse_house_rules("a=1")
    assert parse_house_rules(("free_keep=true",)) == {"free_keep": True}


def test_a_negative_whole_number_house_rule_is_read_as_a_number():
    """``--rule target=-5`` is the number -5, refused by Low-High as a target that is not
    positive, not the text '-5' (which would be refused as not a number at all)."""
    rules = parse_house_rules(["target=-5", "scoring= pips "])
    assert rules == {"target": -5, "scoring": "pips"}
    with pytest.raises(ValueError, match="target must be a positive integer, got -5$"):
        get_game("low-high", **rules)
