"""scoring.dice's roll probabilities and scoring.roll_table, the solver's view of a roll."""

from fractions import Fraction

import pytest

from scoring import get_advisor, get_game
from scoring.dice import distinct_rolls, roll_probability
from scoring.roll_table import FREE, HOT, WIN, check_banked, option_table


@pytest.mark.parametrize(
    ("dice", "ways", "n"),
    [
        ([1, 2, 3], 6, 3),  # 3! orders of three different faces
        ([1, 1, 2], 3, 3),  # 3! / 2!
        ([6, 6, 6], 1, 3),
        ([1, 2, 3, 4, 5], 120, 5),  # the Big Roll: 5! of 6**5
        ([5, 5, 1, 1, 3], 30, 5),  # 5! / (2! 2!)
    ],
)
def test_roll_probability_counts_every_order_of_the_faces(dice, ways, n):
    assert roll_probability(dice) == pytest.approx(ways / 6**n)
    assert roll_probability(reversed(dice)) == pytest.approx(ways / 6**n)


@pytest.mark.parametrize("n", [1, 2, 5, 6])
def test_roll_probability_agrees_with_distinct_rolls(n):
    rolls = list(distinct_rolls(n))
    assert sum(Fraction(p).limit_denominator(6**n) for _r, p in rolls) == 1
    for roll, p in rolls:
        assert roll_probability(roll) == pytest.approx(p)


@pytest.mark.parametrize("bad", [-50, -100, -1])
def test_points_kept_this_turn_are_never_negative(bad):
    with pytest.raises(ValueError, match=f"non-negative multiple of 50, got {bad}"):
        check_banked(bad)
    with pytest.raises(ValueError, match=f"non-negative multiple of 50, got {bad}"):
        get_advisor("greed").advise([1, 5], bad)


def test_check_banked_gives_the_grid_index():
    assert [check_banked(t) for t in (0, 50, 100, 1050)] == [0, 1, 2, 21]


def test_a_one_die_roll_that_scores_rolls_all_five_dice_next():
    """farkle-five-dice.txt: "In the event that all of the dice have points (from a single or
    multiple rolls), the player can either roll all five dice to keep increasing their score
    or pass to the next player." One die showing a 1 or a 5 has scored every die: the keep is
    HOT with five dice to roll next, not zero."""
    groups, bust, mean_best = option_table(get_game("farkle-five"), 1)
    options = sorted((round(p * 6), opts) for p, opts in groups)
    assert options == [(1, [(HOT, 5, 1)]), (1, [(HOT, 5, 2)])]  # a 5 (+50), a 1 (+100)
    assert bust == pytest.approx(4 / 6)  # 2, 3, 4 or 6
    assert mean_best == pytest.approx((100 + 50) / 6)


def test_a_roll_with_dice_left_keeps_them_to_roll():
    """Greed: "the scoring dice are removed and the player has the option of rolling again
    using only the non-scoring dice"; five 1s win farkle-five at once (F4)."""
    groups, _bust, _mean = option_table(get_game("greed"), 2)
    one_and_junk = [p for p, o in groups if o == [(FREE, 1, 2)]]  # 1 and 2, 3, 4 or 6
    assert one_and_junk == [pytest.approx(8 / 36)]
    five, _b, _m = option_table(get_game("farkle-five"), 5)
    assert any((WIN, 5, 100) in o for _p, o in five)  # five 1s: 5000 points, the game
