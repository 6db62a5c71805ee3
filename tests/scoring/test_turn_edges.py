"""A Morning Roll turn's edges the state-machine tests leave open: the value a keep that scores
two ways is given, and what the turn's views (``keeps``, ``score``) show between moves."""

import pytest

from scoring import FarkleGame, FarkleTurn, ScoringError, get_game

PAIRS = {"three_pairs_any": True}  # READINGS M4 (option): count them as three pairs


@pytest.mark.parametrize(
    ("dice", "both"),
    [
        ([1, 1, 1, 1, 5, 5], {2100, 2500}),  # four 1s (2000) + two 5s (100), or three pairs
        ([3, 3, 3, 3, 3, 3], {2400, 2500}),  # six 3s, or three pairs
    ],
)
def test_a_keep_that_scores_two_ways_is_scored_at_its_best_value(dice, both):
    """READINGS M2: "Keeping a set is scored at its best value"; M3: "A kept set is scored at
    its maximum". With the M4 option a whole roll may score as a combo and as three pairs; kept
    with no choice named, it is the 2500 combo, which then forces the re-roll (M5)."""
    turn = FarkleTurn(get_game("morning-roll", **PAIRS))
    turn.roll(dice)
    assert {k.points for k in turn.keeps if len(k.dice) == 6} == both
    keep = turn.keep(dice)
    assert (keep.points, keep.forced_reroll) == (2500, True)
    assert turn.turn_points == 2500 and turn.must_roll and turn.dice_left == 6


def test_keeps_are_offered_only_while_a_keep_is_due():
    """``keeps``: "Legal keeps of the last roll while a keep is due" (none before a roll, none
    once kept, none once banked); the turn's dict carries the same."""
    turn = FarkleTurn(get_game("morning-roll"))
    assert turn.keeps == []
    turn.roll([1, 2, 2, 3, 5, 6])
    assert {k.dice for k in turn.keeps} == {(1,), (5,), (1, 5)}
    turn.keep([1])
    assert turn.keeps == [] and turn.to_dict()["keeps"] == []
    turn.roll([1, 4, 4, 4, 6])
    assert turn.keeps
    turn.keep([1, 4, 4, 4])
    assert turn.keeps == []
    turn.bank()
    assert turn.keeps == [] and turn.to_dict()["keeps"] == []


def test_an_open_turn_scores_nothing_until_it_is_banked():
    """ "A player can only score points if they choose to end their turn before they have
    busted." (morning-roll.txt): ``score`` is 0 while the turn is open, its points once
    banked."""
    turn = FarkleTurn(get_game("morning-roll"))
    turn.roll([1, 2, 2, 3, 5, 6])
    turn.keep([1])
    assert turn.turn_points == 100 and turn.score == 0 and not turn.finished
    turn.roll([1, 4, 4, 4, 6])
    turn.keep([1, 4, 4, 4])
    assert turn.turn_points == 600 and turn.score == 0
    assert turn.bank() == 600 and turn.score == 600 and turn.finished


def test_no_turn_starts_once_the_game_is_over():
    """Greed (READINGS): "Reaching 3000 starts the final round: each other player gets one
    more turn." After bob's one more turn the game is over: no new turn, nothing recorded."""
    game = FarkleGame(get_game("greed"), ["ann", "bob"])
    game.record(3000)  # ann reaches 3000
    assert game.new_turn().state == "awaiting_roll"  # bob's one more turn
    game.record(500)
    assert game.finished and game.winner == "ann"
    with pytest.raises(ScoringError, match="the game is over"):
        game.new_turn()
    assert game.history == [
        {"player": "ann", "points": 3000, "added": 3000},
        {"player": "bob", "points": 500, "added": 500},
    ]
