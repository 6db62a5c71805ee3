"""An audit of the strategy advisor on states small enough to check without it: Greed scored
and solved here from greed.txt (G1-G4) by plain enumeration, and closed forms far above the
cut-off. Nothing here calls the advisor's helpers or the rules' keeps."""

from collections import Counter
from functools import cache

import pytest

from scoring import get_advisor

from dicecam_testing.farkle_audit import rolls


def greed_points(dice: tuple[int, ...]) -> tuple[int, int]:
    """``(points, scoring dice)`` of a Greed roll straight from greed.txt's chart: one triple
    (three 1s 1000, three Ns N x 100), then each other 1 is 100 and each other 5 is 50 (G2: a
    4th or 5th 2, 3, 4 or 6 scores nothing; G4: no straight)."""
    counts = Counter(dice)
    points = used = 0
    for face, n in counts.items():
        if n >= 3:
            points += 1000 if face == 1 else 100 * face
            used += 3
            counts[face] -= 3
    points += 100 * counts[1] + 50 * counts[5]
    return points, used + counts[1] + counts[5]


@cache
def greed_solver(on_board: bool, cap: int):
    """``value(n, t)``: expected final points of rolling ``n`` dice with ``t`` kept, playing
    on optimally (G1: every scoring die is removed; all scored: roll five again). A bust
    loses the turn; banking pays ``t`` (not on the board: nothing below 300, G3). Past
    ``cap`` the player banks."""

    def bank(t: int) -> int:
        return t if on_board or t >= 300 else 0

    @cache
    def value(n: int, t: int) -> float:
        total = 0.0
        for dice, p in rolls(n):
            points, used = greed_points(dice)
            if points:
                total += p * after_keep(n - used or 5, t + points)
        return total

    def after_keep(left: int, t: int) -> float:
        return float(bank(t)) if t > cap else max(bank(t), value(left, t))

    return value


@pytest.mark.parametrize("on_board", [True, False])
def test_greed_values_of_one_and_two_dice_match_an_enumeration(on_board):
    value = greed_solver(on_board, cap=4000)
    wider = greed_solver(on_board, cap=8000)  # past the cap banking wins: same values
    adv = get_advisor("greed", on_board=on_board)
    for n in (1, 2):
        for t in (0, 50, 100, 250, 300, 600, 1000, 2000):
            assert value(n, t) == pytest.approx(wider(n, t), abs=1e-9)
            assert adv.roll_value(n, t) == pytest.approx(value(n, t), abs=1e-9)
    assert adv.expected_turn_score == pytest.approx(value(5, 0), abs=1e-9)


@pytest.mark.parametrize("on_board", [True, False])
@pytest.mark.parametrize(
    ("dice", "keep"),
    [((1, 3), (1,)), ((5, 5), (5, 5)), ((1,), (1,)), ((2, 5), (5,)), ((1, 5), (1, 5))],
)
@pytest.mark.parametrize("banked", [0, 150, 250, 400, 1500])
def test_greed_advice_on_one_and_two_dice(on_board, dice, keep, banked):
    """G1 leaves one keep (every scoring die); then bank or roll the rest (all five when every
    die scored), whichever the enumeration says is worth more."""
    value = greed_solver(on_board, cap=4000)
    points, used = greed_points(dice)
    t = banked + points
    bank = t if on_board or t >= 300 else 0
    roll = value(len(dice) - used or 5, t)
    opts = get_advisor("greed", on_board=on_board).advise(list(dice), banked)
    got = {o.then: o.expected for o in opts}
    assert {o.keep for o in opts} == {keep} and all(o.points == points for o in opts)
    assert got["bank"] == pytest.approx(bank, abs=1e-9)
    assert got["roll"] == pytest.approx(roll, abs=1e-9)
    assert opts[0].then == ("roll" if roll > bank else "bank")


T = 50_000  # far above every game's cut-off: after a keep, banking is best


@pytest.mark.parametrize("name", ["greed", "morning-roll"])
def test_two_dice_far_above_the_cut_off(name):
    """Two dice, by hand: 1-1 +200, 1-5 (2 ways) +150, 5-5 +100, a 1 with a 2/3/4/6 (8 ways)
    +100, a 5 with one (8 ways) +50, and 16 of the 36 rolls bust: (20 T + 1800) / 36."""
    adv = get_advisor(name)
    assert adv.roll_value(2, T) == pytest.approx((20 * T + 1800) / 36, abs=1e-9)
    best = adv.advise([1, 3], T)[0]
    assert (best.keep, best.then, best.expected) == ((1,), "bank", T + 100.0)


def test_greed_one_die_far_above_the_cut_off():
    """A 1 (+100) or a 5 (+50), each then banked; four faces in six bust."""
    assert get_advisor("greed").roll_value(1, T) == pytest.approx((2 * T + 150) / 6, abs=1e-9)
