"""A Morning Roll turn's edges the state-machine tests leave open: the value a keep that scores
two ways is given, and what the turn's views (``keeps``, ``score``) show between moves."""

import copy

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


def test_a_roll_of_more_dice_than_are_left_names_the_count_due():
    turn = FarkleTurn(get_game("morning-roll"))
    turn.roll([1, 2, 2, 3, 4, 6])
    turn.keep([1])
    with pytest.raises(ScoringError, match=r"^expected a roll of 5 dice, got 6$"):
        turn.roll([1, 2, 2, 3, 4, 6])
    with pytest.raises(
        ScoringError, match=r"^expected a roll of 5 dice, got 6 \(1 off the table\)$"
    ):
        turn.roll([1, 2, 2, 3, 4], off_table=1)
    assert turn.state == "awaiting_roll" and len(turn.rolls) == 1


def test_the_turns_dict_is_a_copy():
    """A caller marking or adding a roll in ``to_dict()`` (the service turns it into JSON)
    leaves the turn's rolls as they were."""
    turn = FarkleTurn(get_game("morning-roll"))
    turn.roll([1, 2, 2, 3, 5, 6])
    d = turn.to_dict()
    d["rolls"][0]["bust"] = True
    d["rolls"].append({"dice": [1], "off_table": 0})
    assert turn.rolls == [{"dice": [1, 2, 2, 3, 5, 6], "off_table": 0}]


def test_the_turns_dict_copies_each_rolls_dice_and_keep_too():
    """The copy went one level down only: editing a roll's dice or its keep in ``to_dict()``
    changed the turn's own record of that roll."""
    turn = FarkleTurn(get_game("morning-roll"))
    turn.roll([1, 2, 2, 3, 5, 6])
    turn.keep(turn.keeps[0].dice)
    before = copy.deepcopy(turn.rolls)
    d = turn.to_dict()
    d["rolls"][0]["dice"].append(6)
    d["rolls"][0]["keep"]["points"] = 9999
    assert turn.rolls == before


def test_every_morning_roll_player_starts_on_the_board():
    """morning-roll.txt: "there is no minimum first score required to get on the board.\""""
    game = FarkleGame(get_game("morning-roll"), ["heather", "mike"])
    assert game.on_board == {"heather": True, "mike": True}
    assert game.to_dict()["on_board"] == {"heather": True, "mike": True}
    assert game.record(0) == 0 and game.on_board["heather"]


@pytest.mark.parametrize("points", [-50, -100])
def test_a_negative_turn_is_refused_and_changes_nothing(points):
    """A bust scores zero (morning-roll.txt: "giving them a score of zero for the turn"); no
    turn takes points away."""
    game = FarkleGame(get_game("morning-roll"), ["heather", "mike"])
    game.record(300)
    with pytest.raises(ScoringError, match=f"non-negative multiple of 50, got {points}"):
        game.record(points)
    assert game.scores == {"heather": 300, "mike": 0} and game.current_player == "mike"
    assert len(game.history) == 1


def test_a_pass_on_hot_dice_skips_one_turn_only():
    """READINGS F3: "Passing after every die has scored makes the passer skip their own next
    turn": that one turn, not every turn after it."""
    game = FarkleGame(get_game("farkle-five"), ["ann", "bob"])
    game.record(600, skips_next_turn=True)  # ann
    game.record(500)  # bob; ann's next turn is skipped
    assert game.current_player == "bob"
    game.record(0)  # bob again
    assert game.current_player == "ann" and game.skip_next == {"ann": False, "bob": False}
    assert [h.get("skipped", False) for h in game.history] == [False, False, True, False]
    assert game.turns_taken == {"ann": 1, "bob": 2}  # a skipped turn is not one taken
