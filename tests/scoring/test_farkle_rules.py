"""Farkle-family rules, table-driven from the rule texts and READINGS.md."""

import pytest

from scoring import GAME_NAMES, Keep, get_game, unknown_game


def keeps_of(game, dice):
    return {(k.dice, k.points, k.forced_reroll) for k in get_game(game).keeps(dice)}


@pytest.mark.parametrize(
    ("game", "dice", "best"),
    [
        # Morning Roll text examples and score table
        ("morning-roll", [1, 2, 2, 3, 5, 6], 150),
        ("morning-roll", [1, 4, 4, 4, 6], 500),
        ("morning-roll", [1, 1, 1, 1, 2, 3], 2000),  # M3: four 1s = 2000, not 1000 + 100
        ("morning-roll", [6, 6, 6, 6, 6, 6], 4800),
        ("morning-roll", [5, 5, 5, 5, 5, 2], 2000),
        ("morning-roll", [1, 1, 1, 1, 1, 1], 8000),
        ("morning-roll", [2, 2, 2, 2, 2], 800),
        ("morning-roll", [3, 3, 3, 3], 600),
        ("morning-roll", [1, 1], 200),  # M6
        ("morning-roll", [5, 5], 100),
        ("morning-roll", [1, 2, 3, 4, 5, 6], 2500),
        ("morning-roll", [2, 2, 3, 3, 6, 6], 2500),  # boxcars
        ("morning-roll", [2, 2, 2, 2, 3, 3], 400),  # M4: 4+2 is not boxcars by default
        # five-dice Farkle text examples
        ("farkle-five", [2, 2, 2, 5, 1], 350),
        ("farkle-five", [4, 4, 4, 2, 6], 400),
        ("farkle-five", [1, 1, 1, 1, 3], 2000),
        ("farkle-five", [2, 2, 2, 2, 3], 400),
        ("farkle-five", [5, 5, 5, 5, 5], 2000),  # F5
        ("farkle-five", [2, 2, 2, 2, 2], 800),
        ("farkle-five", [1, 1, 1, 1, 1], 5000),  # F4
        ("farkle-five", [1, 2, 3, 4, 5], 500),  # F6 Big Roll on five dice
        ("farkle-five", [1, 2, 3, 4], 100),
        # Greed text examples and G2/G4
        ("greed", [5, 1, 3, 4, 1], 250),
        ("greed", [1, 1, 1, 3, 1], 1100),
        ("greed", [2, 4, 4, 5, 4], 450),
        ("greed", [1, 1, 1, 1, 1], 1200),
        ("greed", [2, 2, 2, 2, 2], 200),
        ("greed", [1, 2, 3, 4, 5], 150),
    ],
)
def test_best_score_matches_rule_texts(game, dice, best):
    assert get_game(game).best_score(dice) == best


@pytest.mark.parametrize(
    ("game", "dice"),
    [
        ("morning-roll", [2, 2, 3, 4, 6]),  # Tom
        ("morning-roll", [3, 4]),  # Mike
        ("morning-roll", [2, 3, 4, 6, 6, 3]),
        ("farkle-five", [2, 3, 4, 6, 6]),
        ("greed", [2, 2, 3, 4, 6]),
        ("greed", [6]),
    ],
)
def test_busts(game, dice):
    g = get_game(game)
    assert g.is_bust(dice)
    assert g.keeps(dice) == []
    assert g.best_score(dice) == 0


def test_morning_roll_keeps_any_scoring_submultiset():
    found = keeps_of("morning-roll", [1, 1, 1, 5, 2, 3])
    assert found == {
        ((1, 1, 1, 5), 1050, False),
        ((1, 1, 1), 1000, False),
        ((1, 1, 5), 250, False),
        ((1, 1), 200, False),
        ((1, 5), 150, False),
        ((1,), 100, False),
        ((5,), 50, False),
    }


def test_ones_and_fives_of_a_triple_or_more_may_be_kept_as_singles():  # M1
    found = keeps_of("morning-roll", [1, 1, 1, 5, 5, 5])
    assert ((1,), 100, False) in found and ((1, 1), 200, False) in found
    assert ((5, 5), 100, False) in found and ((1, 1, 5, 5), 300, False) in found
    assert ((1, 1, 1, 5), 1050, False) in found and ((1, 5, 5, 5), 600, False) in found
    assert ((1, 1, 1, 1), 2000, False) in keeps_of("morning-roll", [1, 1, 1, 1, 2, 3])  # M3
    assert ((1, 1, 1), 1000, False) in keeps_of("morning-roll", [1, 1, 1, 1, 2, 3])


def test_morning_roll_three_of_four_fours_keep_as_triple():  # M2
    assert ((4, 4, 4), 400, False) in keeps_of("morning-roll", [4, 4, 4, 4, 2, 3])
    assert ((4, 4, 4, 4), 800, False) in keeps_of("morning-roll", [4, 4, 4, 4, 2, 3])


def test_straight_forces_reroll_but_its_1_and_5_may_be_kept_alone():  # M5
    found = keeps_of("morning-roll", [1, 2, 3, 4, 5, 6])
    assert found == {
        ((1, 2, 3, 4, 5, 6), 2500, True),
        ((1, 5), 150, False),
        ((1,), 100, False),
        ((5,), 50, False),
    }


def test_boxcars_need_three_different_pairs_unless_option():  # M4
    assert ((2, 2, 3, 3, 4, 4), 2500, True) in keeps_of("morning-roll", [2, 2, 3, 3, 4, 4])
    assert get_game("morning-roll").best_score([3, 3, 3, 3, 3, 3]) == 2400
    opt = get_game("morning-roll", three_pairs_any=True)
    four_two = {(k.dice, k.points, k.forced_reroll) for k in opt.keeps([2, 2, 2, 2, 3, 3])}
    assert ((2, 2, 2, 2, 3, 3), 2500, True) in four_two
    six = {(k.dice, k.points, k.forced_reroll) for k in opt.keeps([3] * 6)}
    # scored at its best (2500 combo) or, without the forced re-roll, as six 3s
    assert ((3,) * 6, 2500, True) in six and ((3,) * 6, 2400, False) in six
    assert opt.best_score([1] * 6) == 8000  # six 1s stay 8000: the combo is worth less


def test_one_keep_games_keep_every_scoring_die():  # F1, G1
    assert get_game("farkle-five").keeps([2, 2, 2, 5, 1]) == [Keep((1, 2, 2, 2, 5), 350)]
    assert get_game("greed").keeps([2, 2, 2, 2, 5]) == [Keep((2, 2, 2, 5), 250)]
    five_ones = get_game("farkle-five").keeps([1] * 5)
    assert five_ones == [Keep((1,) * 5, 5000, wins_game=True)]


def test_farkle_five_free_keep_option_lists_every_choice():
    found = {
        (k.dice, k.points) for k in get_game("farkle-five", free_keep=True).keeps([2, 2, 2, 5, 1])
    }
    assert ((1,), 100) in found and ((2, 2, 2), 200) in found and ((1, 2, 2, 2, 5), 350) in found
    assert len(found) == 7


def test_keeps_are_distinct_and_sorted_best_first():
    for game in GAME_NAMES[:3]:
        keeps = get_game(game).keeps([1, 1, 5, 5, 5])
        assert len({(k.dice, k.forced_reroll) for k in keeps}) == len(keeps)
        assert [k.points for k in keeps] == sorted((k.points for k in keeps), reverse=True)


def test_keep_to_dict():
    assert Keep((1, 5), 150).to_dict() == {
        "dice": [1, 5],
        "points": 150,
        "forced_reroll": False,
        "wins_game": False,
    }


@pytest.mark.parametrize(
    ("game", "dice", "message"),
    [
        ("morning-roll", [1, 7], "must be 1 to 6, got 7"),
        ("morning-roll", [0, 1], "got 0"),
        ("morning-roll", [1] * 8, "at most 6 dice, got 8"),
        ("farkle-five", [1] * 6, "at most 5 dice, got 6"),
        ("greed", [], "at least 1 dice, got 0"),
        ("greed", ["a", 1], "integer 1 to 6, got 'a'"),
        ("greed", [True, 1], "integer 1 to 6, got True"),
        ("greed", "11111", "string"),
    ],
)
def test_bad_dice_raise_value_error_naming_the_problem(game, dice, message):
    with pytest.raises(ValueError, match=message) as info:
        get_game(game).keeps(dice)
    assert game in str(info.value)


def test_get_game_errors_name_valid_choices():
    with pytest.raises(
        ValueError, match="morning-roll, farkle-five, greed, solitaire-dice, low-high"
    ):
        get_game("yahtzee")
    with pytest.raises(ValueError, match=r"'farkle' \(did you mean 'farkle-five'\?\)"):
        get_game("farkle")
    assert "did you mean 'solitaire-dice'" in unknown_game("Solitaire")
    assert "did you mean" not in unknown_game("yahtzee")
    with pytest.raises(ValueError, match="valid: three_pairs_any"):
        get_game("morning-roll", boxcars=True)
    with pytest.raises(ValueError, match="true or false"):
        get_game("farkle-five", free_keep="yes")
    assert GAME_NAMES == ("morning-roll", "farkle-five", "greed", "solitaire-dice", "low-high")
