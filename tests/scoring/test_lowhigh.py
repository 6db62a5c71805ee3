"""Low-High: sets, the good and bad tracks, both scoring variants, a game to 30."""

import re

import pytest

from scoring import LowHighGame, LowHighTurn, get_game


def test_first_roll_sets_from_the_text():
    # "111124445555": four 1s, one 2, three 4s and four 5s
    opts = get_game("low-high").options([1, 1, 1, 1, 2, 4, 4, 4, 5, 5, 5, 5])
    assert [(o["face"], o["count"]) for o in opts] == [(1, 4), (2, 1), (4, 3), (5, 4)]
    assert opts[0]["keep"] == [1, 1, 1, 1]


def test_reroll_sends_dice_at_or_below_the_highest_kept_to_the_bad_track():  # L1
    game = get_game("low-high")
    good, bad = game.split([1, 1, 2, 4, 4, 6], highest_kept=2)
    assert bad == [1, 1, 2] and good == [4, 4, 6]
    assert [o["face"] for o in game.options([1, 1, 2, 4, 4, 6], 2)] == [4, 6]


def test_turn_from_the_text():
    turn = LowHighTurn(get_game("low-high"))
    sets = turn.roll([1, 1, 1, 1, 2, 4, 4, 4, 5, 5, 5, 5, 3])
    assert {s["face"] for s in sets} == {1, 2, 3, 4, 5}
    turn.keep(1)
    turn.roll([2, 2, 2, 6, 6, 6, 3, 3, 3])
    turn.keep(2)
    assert turn.good == [1, 1, 1, 1, 2, 2, 2] and turn.dice_left == 6
    turn.roll([1, 1, 2, 4, 4, 6])
    assert turn.bad == [1, 1, 2]
    turn.keep(4)  # L2: the whole set of 4s
    assert turn.end() == 9 - 3 == 6


def test_a_roll_that_all_goes_bad_ends_the_turn():  # L3
    turn = LowHighTurn(get_game("low-high"))
    turn.roll([6] * 3 + [1] * 10)
    turn.keep(6)
    assert turn.roll([1] * 10) == []
    assert turn.state == "over" and turn.end() == 3 - 10


@pytest.mark.parametrize(
    ("rules", "good", "bad", "score"),
    [
        ({}, [1, 1, 1, 1, 2, 2, 2, 4], [1, 1, 2], 5),
        ({}, [1], [1, 2, 3], -2),
        ({"scoring": "pips"}, [1, 2, 5, 6], [3, 3], 11),  # cancels 1 and 2
        ({"scoring": "pips", "cancel": "descending"}, [1, 2, 5, 6], [3, 3], 3),
        ({"scoring": "pips"}, [6], [1, 2, 4], -6),  # 6 cancels 1; 2 and 4 are lost
        ({"scoring": "pips", "cancel": "descending"}, [6], [1, 2, 4], -3),
    ],
)
def test_turn_score_variants(rules, good, bad, score):  # L4
    assert get_game("low-high", **rules).turn_score(good, bad) == score


def test_illegal_moves():
    turn = LowHighTurn(get_game("low-high"))
    with pytest.raises(ValueError, match="expected a roll of 13 dice, got 5"):
        turn.roll([1, 2, 3, 4, 5])
    turn.roll([1] * 13)
    with pytest.raises(ValueError, match="no good 2 to keep"):
        turn.keep(2)
    with pytest.raises(ValueError, match="must be kept before"):
        turn.end()
    with pytest.raises(ValueError, match="scoring must be 'dice' or 'pips'"):
        get_game("low-high", scoring="points")
    with pytest.raises(ValueError, match="at most 13 dice, got 14"):
        get_game("low-high").options([1] * 14)


def test_first_to_30_wins():
    g = LowHighGame(get_game("low-high"), ["ann", "bob"])
    for _ in range(4):
        g.record(6)
        g.record(5)
    assert g.winner is None and g.current_player == "ann"
    g.record(6)
    assert g.winner == "ann" and g.scores == {"ann": 30, "bob": 20}
    with pytest.raises(ValueError, match="game is over"):
        g.record(1)
    with pytest.raises(ValueError, match="2 to 6"):
        LowHighGame(get_game("low-high"), ["solo"])


def test_a_turn_cannot_end_before_its_first_roll():
    """low-high.txt: "On your turn, first roll all thirteen dice. ... You must choose a set to
    keep." A turn that has not rolled has no score, not a score of 0."""
    turn = LowHighTurn(get_game("low-high"))
    with pytest.raises(ValueError, match="nothing rolled yet"):
        turn.end()
    assert turn.state == "awaiting_roll"
    turn.roll([4] * 13)
    turn.keep(4)
    assert turn.end() == 13


def test_a_game_has_two_to_six_players():
    """low-high.txt: "Two-to-Six PLAYERS"."""
    seven = ["a", "b", "c", "d", "e", "f", "g"]
    with pytest.raises(ValueError, match=re.escape(f"2 to 6 distinct players, got {seven!r}")):
        LowHighGame(get_game("low-high"), seven)
    assert LowHighGame(get_game("low-high"), seven[:6]).players == seven[:6]


@pytest.mark.parametrize("target", [0, -30])
def test_the_target_is_a_positive_score(target):
    """low-high.txt: "The first player to earn 30 points wins"; with pips "the table agrees a
    target" (L4): a target of 0 would be won before the first roll."""
    with pytest.raises(ValueError, match=f"target must be a positive integer, got {target}"):
        get_game("low-high", target=target)
    assert get_game("low-high", scoring="pips", target=1).target == 1


def test_the_summary_of_a_roll_that_all_goes_bad_says_the_turn_is_over():
    """READINGS L3: "A roll whose dice all go bad ends the turn with no keep." """
    game = get_game("low-high")
    over = game.score([2, 1, 1], highest_kept=2)
    assert over["turn_over"] and over["sets"] == [] and over["bad"] == [1, 1, 2]
    going = game.score([3, 1], highest_kept=2)
    assert not going["turn_over"] and going["bad"] == [1] and going["dice"] == [1, 3]
    assert [s["face"] for s in going["sets"]] == [3]
