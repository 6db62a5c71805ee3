"""An independent audit of the Farkle family against its rule texts.

Each row was written from /work/shared/rules (morning-roll.txt, farkle-five-dice.txt, greed.txt)
and READINGS.md before reading the scoring code; the comment names the rule line it comes
from. Rows already in test_farkle_rules.py and test_turn.py are not repeated here.
"""

from __future__ import annotations

from typing import Any

import pytest

from scoring import FarkleGame, FarkleTurn, ScoringError, get_game

MR, FIVE, GREED = "morning-roll", "farkle-five", "greed"
PAIRS = {"three_pairs_any": True}  # M4 option
FREE = {"free_keep": True}  # F1 option


@pytest.mark.parametrize(
    ("game", "rules", "dice", "best"),
    [
        # --- Morning Roll, score table: triple x100 (1s 1000), each further die doubles
        (MR, {}, [2, 2, 2], 200),  # "Three of a kind ... 2: 200"
        (MR, {}, [4, 4, 4, 4, 4, 4], 3200),  # "Six of a kind ... 4: 3200"
        (MR, {}, [5, 5, 5, 5, 5, 5], 4000),  # "Six of a kind ... 5: 4000"
        (MR, {}, [1, 1, 1, 1, 1], 4000),  # "Five of a kind ... 1: 4000"
        (MR, {}, [4, 4, 4, 4, 4], 1600),  # "Five of a kind ... 4: 1600"
        (MR, {}, [6, 6, 6, 6, 6], 2400),  # "Five of a kind ... 6: 2400"
        (MR, {}, [6, 6], 0),  # M6: pairs of 2, 3, 4, 6 score 0
        (MR, {}, [5], 50),  # "5: Single 50 points"
        (MR, {}, [1, 5], 150),  # two singles on two dice
        # overlapping combos: the best split of the roll (M3)
        (MR, {}, [1, 1, 1, 1, 5, 3], 2050),  # four 1s (2000) + a 5, not 1000 + 100 + 50
        (MR, {}, [1, 1, 1, 1, 1, 5], 4050),  # five 1s + a single 5
        (MR, {}, [5, 5, 5, 5, 5, 1], 2100),  # five 5s + a single 1
        (MR, {}, [1, 1, 1, 5, 5, 5], 1500),  # two triples: 1000 + 500
        (MR, {}, [2, 2, 2, 3, 3, 3], 500),  # two triples are not "three unique pairs"
        (MR, PAIRS, [2, 2, 2, 3, 3, 3], 500),  # ... not even under the M4 option
        (MR, {}, [1, 1, 5, 5, 3, 3], 2500),  # boxcars beat 200 + 100
        (MR, {}, [1, 1, 1, 1, 5, 5], 2100),  # M4: 4 + 2 is no boxcars: 2000 + 100
        (MR, PAIRS, [1, 1, 1, 1, 5, 5], 2500),  # M4 option: 4 + 2 counts as three pairs
        (MR, {}, [1, 1, 2, 2, 2, 2], 600),  # four 2s + two 1s, no boxcars
        (MR, PAIRS, [1, 1, 2, 2, 2, 2], 2500),
        (MR, {}, [2, 2, 2, 2, 2, 2], 1600),  # M4: six of a kind is no boxcars
        (MR, PAIRS, [2, 2, 2, 2, 2, 2], 2500),  # M4 option: 2500 beats 1600
        (MR, PAIRS, [5, 5, 5, 5, 5, 5], 4000),  # M4 option: six 5s stay 4000
        # straights: only 1-2-3-4-5-6 on six dice
        (MR, {}, [1, 2, 3, 4, 5, 5], 200),  # no straight: 1 + two 5s
        (MR, {}, [2, 3, 4, 5, 6, 6], 50),  # no straight: the 5 alone
        (MR, {}, [1, 2, 3, 4, 5], 150),  # five dice are no straight
        (MR, {}, [2, 2, 3, 3, 4, 6], 0),  # two pairs of 2-4-6 faces: bust
        # --- five-dice Farkle: "four of a kind doubles ... five of a kind doubles four" (F5)
        (FIVE, {}, [3, 3, 3, 3, 3], 1200),
        (FIVE, {}, [4, 4, 4, 4, 4], 1600),
        (FIVE, {}, [6, 6, 6, 6, 6], 2400),
        (FIVE, {}, [1, 1, 1, 1, 5], 2050),  # four 1s + a five
        (FIVE, {}, [5, 5, 5, 5, 1], 1100),  # four 5s + a one
        (FIVE, {}, [6, 6, 6, 6, 1], 1300),  # four 6s + a one
        (FIVE, {}, [1, 1, 1, 5, 5], 1100),  # three 1s + two fives
        (FIVE, {}, [1, 1, 1, 1], 2000),  # four 1s on four dice
        (FIVE, {}, [5, 5], 100),  # "fives are worth fifty points"
        (FIVE, {}, [2, 3, 4, 5, 6], 50),  # F6: 2-6 is no Big Roll: the 5 alone
        (FIVE, {}, [2, 2, 3, 3, 4], 0),  # no 1, 5 or triple: a farkle
        (FIVE, FREE, [1, 2, 3, 4, 5], 500),  # F6 under the free-keep option too
        # --- Greed: triples only (G2), no straight (G4)
        (GREED, {}, [5, 5, 5, 5, 5], 600),  # G2: 500 + 50 + 50
        (GREED, {}, [3, 3, 3, 3, 3], 300),  # G2: 4th and 5th 3 do not score
        (GREED, {}, [6, 6, 6, 6, 1], 700),  # G2: 600 + 100, one 6 left
        (GREED, {}, [1, 1, 1, 5, 5], 1100),  # "Three 1's => 1000" + two fives
        (GREED, {}, [1, 1, 1, 1], 1100),  # three 1s + a single 1, on four dice
        (GREED, {}, [5, 5, 5, 5], 550),  # three 5s + a single 5
        (GREED, {}, [4, 4], 0),  # a pair scores nothing
    ],
)
def test_best_score(game: str, rules: dict[str, Any], dice: list[int], best: int) -> None:
    assert get_game(game, **rules).best_score(dice) == best


@pytest.mark.parametrize(
    ("game", "dice", "kept", "points"),
    [
        # one keep per roll: every scoring die, and only those (F1, G1)
        (FIVE, [4, 4, 4, 2, 6], (4, 4, 4), 400),  # "the player can roll the two and six"
        (FIVE, [2, 3, 4, 5, 6], (5,), 50),  # F6: no Big Roll, the 5 scores
        (FIVE, [1, 2, 3, 4, 5], (1, 2, 3, 4, 5), 500),  # F6: the Big Roll is the keep
        (FIVE, [6, 6, 6, 6, 1], (1, 6, 6, 6, 6), 1300),  # F5: four 6s and the 1
        (GREED, [6, 6, 6, 6, 1], (1, 6, 6, 6), 700),  # G2: the 4th 6 stays to roll
        (GREED, [2, 2, 2, 2, 2], (2, 2, 2), 200),  # G2: two 2s stay to roll
        (GREED, [5, 1, 3, 4, 1], (1, 1, 5), 250),  # "3 and 4 are non-scoring dice"
        (GREED, [2, 4, 4, 5, 4], (4, 4, 4, 5), 450),  # "2 is a non-score die"
    ],
)
def test_one_keep_sets_aside_every_scoring_die(
    game: str, dice: list[int], kept: tuple[int, ...], points: int
) -> None:
    (keep,) = get_game(game).keeps(dice)
    assert (keep.dice, keep.points, keep.forced_reroll) == (kept, points, False)


def keeps_of(game: str, dice: list[int], **rules: Any) -> set[tuple[tuple[int, ...], int, bool]]:
    return {(k.dice, k.points, k.forced_reroll) for k in get_game(game, **rules).keeps(dice)}


def test_boxcars_of_non_scoring_faces_keep_only_as_the_combo() -> None:
    # "Three unique pairs aka boxcars = 2500"; no die of 2-2-3-3-4-4 scores on its own
    assert keeps_of(MR, [2, 2, 3, 3, 4, 4]) == {((2, 2, 3, 3, 4, 4), 2500, True)}


def test_boxcars_with_ones_and_fives_may_keep_the_singles() -> None:  # M2, M5
    found = keeps_of(MR, [1, 1, 5, 5, 3, 3])
    assert ((1, 1, 3, 3, 5, 5), 2500, True) in found
    assert ((1, 1, 5, 5), 300, False) in found
    assert not any(len(dice) == 6 and not forced for dice, _, forced in found)


def test_four_ones_and_two_fives_keep_whole_without_forced_reroll() -> None:  # M4, M5
    assert ((1, 1, 1, 1, 5, 5), 2100, False) in keeps_of(MR, [1, 1, 1, 1, 5, 5])
    assert ((1, 1, 1, 1, 5, 5), 2500, True) not in keeps_of(MR, [1, 1, 1, 1, 5, 5])
    # M4 option: the 2500 combo (forced re-roll) or 2100 without it
    both = keeps_of(MR, [1, 1, 1, 1, 5, 5], **PAIRS)
    assert {((1, 1, 1, 1, 5, 5), 2500, True), ((1, 1, 1, 1, 5, 5), 2100, False)} <= both


def test_free_keep_big_roll_and_five_ones_choices() -> None:  # F1 option, F4, F6
    big = keeps_of(FIVE, [1, 2, 3, 4, 5], **FREE)
    assert big == {
        ((1, 2, 3, 4, 5), 500, False),
        ((1, 5), 150, False),
        ((1,), 100, False),
        ((5,), 50, False),
    }
    ones = {(k.dice, k.points, k.wins_game) for k in get_game(FIVE, **FREE).keeps([1] * 5)}
    assert ((1,) * 5, 5000, True) in ones
    assert ((1,) * 4, 2000, False) in ones and ((1,) * 3, 1000, False) in ones


Move = tuple[str, list[int]]


def play(game: str, moves: list[Move], **rules: Any) -> FarkleTurn:
    turn = FarkleTurn(get_game(game, **rules))
    for move, dice in moves:
        getattr(turn, move)(dice)
    return turn


@pytest.mark.parametrize(
    ("game", "rules", "moves", "expected"),
    [
        # M5: boxcars kept as 2500 force a roll of all six dice
        (
            MR,
            {},
            [("roll", [2, 2, 3, 3, 4, 4]), ("keep", [2, 2, 3, 3, 4, 4])],
            {"turn_points": 2500, "must_roll": True, "dice_left": 6},
        ),
        # M5: the forced re-roll that scores may then be banked: 2500 + 100
        (
            MR,
            {},
            [
                ("roll", [1, 2, 3, 4, 5, 6]),
                ("keep", [1, 2, 3, 4, 5, 6]),
                ("roll", [1, 2, 2, 3, 4, 6]),
                ("keep", [1]),
            ],
            {"turn_points": 2600, "must_roll": False, "dice_left": 5},
        ),
        # M4 option: four 2s and a pair kept as three pairs force the re-roll too
        (
            MR,
            PAIRS,
            [("roll", [2, 2, 2, 2, 3, 3]), ("keep", [2, 2, 2, 2, 3, 3])],
            {"turn_points": 2500, "must_roll": True, "dice_left": 6},
        ),
        # M4 default: 1-1-1-1-5-5 is 2100, all dice scored: roll over or bank (M7)
        (
            MR,
            {},
            [("roll", [1, 1, 1, 1, 5, 5]), ("keep", [1, 1, 1, 1, 5, 5])],
            {"turn_points": 2100, "must_roll": False, "hot_dice": True, "dice_left": 6},
        ),
        # "If all dice have scored after one or more rolls ... rolling over"
        (
            MR,
            {},
            [("roll", [1, 2, 3, 4, 6, 6]), ("keep", [1]), ("roll", [5, 5, 5, 1, 1])]
            + [("keep", [1, 1, 5, 5, 5])],
            {"turn_points": 800, "hot_dice": True, "dice_left": 6},
        ),
        # Tips: "on 3d6 get 5,1,2 ... taking the 5 and the 1 and just going for it on 1d6";
        # the one die scoring rolls over to six
        (
            MR,
            {},
            [("roll", [1, 1, 1, 2, 3, 4]), ("keep", [1, 1, 1]), ("roll", [1, 2, 5])]
            + [("keep", [1, 5]), ("roll", [5]), ("keep", [5])],
            {"turn_points": 1200, "hot_dice": True, "must_roll": False, "dice_left": 6},
        ),
        # ... and the one die not scoring busts the turn
        (
            MR,
            {},
            [("roll", [1, 1, 1, 2, 3, 4]), ("keep", [1, 1, 1]), ("roll", [1, 2, 5])]
            + [("keep", [1, 5]), ("roll", [3])],
            {"state": "bust", "turn_points": 0},
        ),
        # F1: "three fours, a two, and a six, the player can roll the two and six"; a bust
        # on them loses the turn
        (
            FIVE,
            {},
            [("roll", [4, 4, 4, 2, 6]), ("keep", [4, 4, 4]), ("roll", [2, 6])],
            {"state": "bust", "turn_points": 0},
        ),
        # F2: a total ending in 50 on three dice left; the next 5 makes it bankable
        (
            FIVE,
            {},
            [("roll", [1, 5, 2, 3, 6]), ("keep", [1, 5])],
            {"turn_points": 150, "must_roll": True, "dice_left": 3},
        ),
        (
            FIVE,
            {},
            [("roll", [1, 5, 2, 3, 6]), ("keep", [1, 5]), ("roll", [5, 2, 3])] + [("keep", [5])],
            {"turn_points": 200, "must_roll": False, "dice_left": 2},
        ),
        # F6: 1-2-3-4 and a 5 on four dice after a keep are no Big Roll
        (
            FIVE,
            {},
            [("roll", [1, 2, 3, 6, 6]), ("keep", [1]), ("roll", [2, 3, 4, 5])] + [("keep", [5])],
            {"turn_points": 150, "must_roll": True, "dice_left": 3},
        ),
        # G2: the 4th and 5th 2 stay to roll
        (
            GREED,
            {},
            [("roll", [2, 2, 2, 2, 2]), ("keep", [2, 2, 2])],
            {"turn_points": 200, "hot_dice": False, "dice_left": 2},
        ),
        # "If all of the thrown dice are scoring, the player may roll all 5 dice"
        (
            GREED,
            {},
            [("roll", [1, 1, 1, 1, 1]), ("keep", [1, 1, 1, 1, 1])],
            {"turn_points": 1200, "hot_dice": True, "must_roll": False, "dice_left": 5},
        ),
    ],
)
def test_turn(game: str, rules: dict[str, Any], moves: list[Move], expected: dict) -> None:
    turn = play(game, moves, **rules)
    assert {key: getattr(turn, key) for key in expected} == expected


@pytest.mark.parametrize(
    ("game", "moves", "banked", "skips"),
    [
        # M7: no skip rule in Morning Roll; a pass on all dice scored is allowed
        (MR, [("roll", [1, 1, 5, 5, 2, 2]), ("keep", [1, 1, 5, 5])], 300, False),
        # Greed has no 50 rule and no skip: a lone 5 banks 50, a pass on hot dice is free
        (GREED, [("roll", [5, 2, 3, 4, 6]), ("keep", [5])], 50, False),
        (GREED, [("roll", [1, 1, 1, 5, 5]), ("keep", [1, 1, 1, 5, 5])], 1100, False),
        # F3: "If the player passes, the next turn is forfeit"
        (FIVE, [("roll", [2, 2, 2, 1, 1]), ("keep", [1, 1, 2, 2, 2])], 400, True),
    ],
)
def test_bank(game: str, moves: list[Move], banked: int, skips: bool) -> None:
    turn = play(game, moves)
    assert turn.bank() == banked
    assert (turn.state, turn.skips_next_turn) == ("banked", skips)


def test_forced_reroll_after_boxcars_cannot_bank() -> None:  # M5, M7
    turn = play(MR, [("roll", [2, 2, 3, 3, 4, 4]), ("keep", [2, 2, 3, 3, 4, 4])])
    with pytest.raises(ScoringError, match="2500 combo forces a re-roll"):
        turn.bank()


def test_five_ones_win_even_after_a_total_ending_in_50() -> None:  # F4 over F2
    # "five ones which wins the game with 5000 points": the win ends the turn, whatever the
    # total was before; F2's "must roll again" no longer applies
    game = FarkleGame(get_game(FIVE), ["ann", "bob"])
    turn = game.new_turn()
    turn.roll([2, 2, 2, 5, 1])
    turn.keep([1, 2, 2, 2, 5])  # 350: must roll again (F2), all five dice
    turn.roll([1, 1, 1, 1, 1])
    turn.keep([1, 1, 1, 1, 1])
    assert turn.state == "banked" and turn.wins_game and not turn.must_roll
    assert game.finish(turn) == 5350
    assert game.finished and game.winner == "ann"


def test_farkle_five_final_round_gives_each_other_player_one_turn() -> None:  # F8
    game = FarkleGame(get_game(FIVE), ["ann", "bob", "cy"])
    for points in (4500, 500, 0, 500):  # ann reaches 5000 on her second turn
        game.record(points)
    assert game.final_round_by == "ann" and game.current_player == "bob"
    game.record(600)  # bob: 1100
    game.record(5500)  # cy: 5500, more than ann
    assert game.finished and game.winner == "cy" and game.current_player is None


def test_a_pass_below_the_entry_on_hot_dice_still_forfeits_the_next_turn() -> None:  # F3, F7
    game = FarkleGame(get_game(FIVE), ["ann", "bob"])
    turn = play(FIVE, [("roll", [2, 2, 2, 1, 1]), ("keep", [1, 1, 2, 2, 2])])
    turn.bank()
    assert game.finish(turn) == 0  # 400 < 500: not on the board
    game.record(0)  # bob
    assert game.current_player == "bob"  # ann's turn is forfeit


def test_greed_final_round_starts_at_3000_not_before() -> None:  # Greed end game
    """greed.txt: "Once a player reaches 3000 (or more) points, the game enters the final
    round where each of the other players gets one more turn." 2950 is not yet 3000."""
    game = FarkleGame(get_game(GREED), ["ann", "bob"])
    game.record(2950)  # ann: in the game (G3) at 2950
    assert game.final_round_by is None and game.current_player == "bob"
    game.record(0)  # bob
    game.record(50)  # ann: exactly 3000
    assert game.final_round_by == "ann" and game.current_player == "bob"
    game.record(300)  # bob's one more turn
    assert game.finished and game.winner == "ann" and game.scores == {"ann": 3000, "bob": 300}
