"""The exact advisor: checked against an independent naive solver, the Bellman equation, the
cut-off proof's bound, and properties of its advice."""

from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import FarkleAdvisor, Option, get_advisor, get_game
from scoring.dice import distinct_rolls, is_submultiset


def naive_solver(game, cap, skip_penalty=0.0):
    """Plain memoised recursion straight from the rules, banking forced only past ``cap``."""
    n_dice = game.n_dice

    def bank(t, hot):
        if game.no_bank_on_50 and t % 100 == 50:
            return None
        return t - (skip_penalty if hot and game.skip_after_pass else 0.0)

    @cache
    def roll(n, t):
        if t > cap:
            return float(t)
        total = 0.0
        for dice, p in distinct_rolls(n):
            best = 0.0
            for k in game.keeps(dice):
                t2 = t + k.points
                left = n - len(k.dice)
                if k.wins_game:
                    v = t2
                elif k.forced_reroll:
                    v = roll(n_dice, t2)
                else:
                    b = bank(t2, left == 0)
                    r = roll(left or n_dice, t2)
                    v = r if b is None else max(b, r)
                best = max(best, v)
            total += p * best
        return total

    return roll


@pytest.mark.parametrize(("name", "rules"), [("greed", {}), ("farkle-five", {})])
def test_matches_naive_solver_with_a_much_higher_cap(name, rules):
    adv = get_advisor(name, **rules)
    naive = naive_solver(get_game(name, **rules), 2 * adv.cutoff, adv.skip_penalty)
    for n in range(1, 6):
        for t in (0, 150, 300, 1000, 2500):
            assert adv.roll_value(n, t) == pytest.approx(naive(n, t), abs=1e-9)


def test_farkle_five_skip_penalty_is_the_fixed_point():
    adv = get_advisor("farkle-five")
    # points per turn slot: the value of a turn equals the price of a skipped one
    assert adv.expected_turn_score == pytest.approx(adv.skip_penalty, abs=1e-7)
    plain = FarkleAdvisor(get_game("farkle-five"), skip_penalty=0.0)
    assert plain.expected_turn_score > adv.expected_turn_score


def bellman(adv, n, t):
    total = 0.0
    for dice, p in distinct_rolls(n):
        opts = adv.advise(list(dice), t)
        total += p * (opts[0].expected if opts else 0.0)
    return total


@pytest.mark.parametrize("name", ["morning-roll", "greed", "farkle-five"])
def test_values_satisfy_the_bellman_equation(name):
    adv = get_advisor(name)
    for n, t in [(1, 0), (2, 300), (3, 450), (6 if name == "morning-roll" else 5, 0), (4, 1000)]:
        assert adv.roll_value(n, t) == pytest.approx(bellman(adv, n, t), abs=1e-9)


def test_morning_roll_expected_turn_score_is_a_roll_of_six_from_zero():
    adv = get_advisor("morning-roll")
    assert adv.expected_turn_score == adv.roll_value(6, 0)
    assert 400 < adv.expected_turn_score < 1000


def test_above_the_cutoff_banking_wins_and_one_die_is_exact():
    adv = get_advisor("morning-roll")
    for n in range(1, 7):
        for t in (adv.cutoff, adv.cutoff + 50, 3 * adv.cutoff):
            assert adv.roll_value(n, t) < t
    # far above every threshold, one die: a 1 or a 5 then bank, else bust
    t = 50_000
    assert adv.roll_value(1, t) == pytest.approx((t + 100 + t + 50) / 6, abs=1e-9)


@pytest.mark.parametrize("name", ["morning-roll", "greed", "farkle-five"])
def test_truncated_chains_do_not_change_any_value(name):
    assert get_advisor(name).truncation_gap() < 1e-9


@pytest.mark.parametrize("name", ["morning-roll", "greed", "farkle-five"])
def test_bank_thresholds_separate_roll_and_bank(name):
    adv = get_advisor(name)
    for n, t in adv.bank_thresholds().items():
        hot = n == adv.game.n_dice
        b = adv.bank_value(t, hot=hot)
        assert b is not None and b >= adv.roll_value(n, t) - 1e-9
        below = t - 50 if adv.bank_value(t - 50, hot=hot) is not None else t - 100
        if below > 0:
            assert adv.roll_value(n, below) > adv.bank_value(below, hot=hot)


def test_the_morning_roll_question_keep_5_and_1_or_just_the_1():
    """README: on three dice showing 5, 1, 2 - keep both and roll one, or keep the 1 and roll
    two? Rolling on, one die is better up to 400 kept; from 450 two dice are, but by then
    banking beats both."""
    adv = get_advisor("morning-roll")
    for banked in range(150, 1001, 50):
        opts = {(o.keep, o.then): o.expected for o in adv.advise([5, 1, 2], banked)}
        one_die, two_dice = opts[((1, 5), "roll")], opts[((1,), "roll")]
        assert (one_die > two_dice) == (banked <= 400)
        best = adv.advise([5, 1, 2], banked)[0]
        assert (best.keep, best.then) == (((1, 5), "roll") if banked == 150 else ((1, 5), "bank"))


def test_not_on_board_keeps_rolling_below_entry():
    adv = get_advisor("greed", on_board=False)
    opts = adv.advise([1, 2, 3, 4, 6], 0)
    assert [o.then for o in opts] == ["roll", "bank"]
    assert opts[1].expected == 0.0  # 100 is below the 300 entry: banks nothing
    assert get_advisor("greed").expected_turn_score > adv.expected_turn_score


def test_forced_combo_offers_only_roll_and_wins_offer_only_bank():
    adv = get_advisor("morning-roll")
    straight = [o for o in adv.advise([1, 2, 3, 4, 5, 6], 0) if len(o.keep) == 6]
    assert [(o.then, o.forced_reroll) for o in straight] == [("roll", True)]
    assert straight[0].expected == pytest.approx(adv.roll_value(6, 2500))
    win = get_advisor("farkle-five").advise([1, 1, 1, 1, 1], 300)
    assert [(o.then, o.expected) for o in win] == [("bank", 5300.0)]


def test_farkle_five_never_offers_a_bank_ending_in_50():
    opts = get_advisor("farkle-five").advise([2, 2, 2, 5, 3], 0)
    assert [o.then for o in opts] == ["roll"]


def test_bad_advice_input():
    adv = get_advisor("morning-roll")
    with pytest.raises(ValueError, match="multiple of 50, got 120"):
        adv.advise([1, 2], 120)
    with pytest.raises(ValueError, match="got 7"):
        adv.advise([1, 7], 0)
    with pytest.raises(ValueError, match="no strategy advisor for 'low-high'"):
        get_advisor("low-high")
    assert adv.advise([2, 3, 4, 6, 6, 2], 500) == []


def test_option_to_dict():
    # unrounded: the CLI's and the API's JSON carry the advisor's value exactly
    assert Option((1, 5), "roll", 319.70000001, 150).to_dict() == {
        "keep": [1, 5],
        "then": "roll",
        "expected": 319.70000001,
        "points": 150,
        "forced_reroll": False,
    }


def test_strategy_summary_fields():
    d = get_advisor("morning-roll").to_dict()
    assert set(d["bank_thresholds"]) == {"1", "2", "3", "4", "5", "6"}
    assert d["expected_turn_score"] > 0 and d["cutoff"] >= max(d["bank_thresholds"].values())


rolls = st.integers(1, 6).flatmap(lambda n: st.lists(st.integers(1, 6), min_size=n, max_size=n))
totals = st.integers(0, 600).map(lambda k: 50 * k)


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(["morning-roll", "greed", "farkle-five"]), dice=rolls, banked=totals)
def test_advice_properties(name, dice, banked):
    adv = get_advisor(name)
    dice = dice[: adv.game.n_dice]
    opts = adv.advise(dice, banked)
    assert [o.expected for o in opts] == sorted((o.expected for o in opts), reverse=True)
    assert (not opts) == adv.game.is_bust(dice)
    for o in opts:
        assert is_submultiset(o.keep, dice) and o.then in ("bank", "roll")
    banks = [o.expected for o in opts if o.then == "bank"]
    if banks:  # the best option is never below banking
        assert opts[0].expected >= max(banks)
    free = [k for k in adv.game.keeps(dice) if not k.forced_reroll]
    if free:  # and never below banking the best keep that does not force a re-roll
        k = max(free, key=lambda k: k.points)
        b = adv.bank_value(banked + k.points, hot=len(k.dice) == len(dice))
        if b is not None:
            assert opts[0].expected >= b - 1e-9


def test_totals_near_and_past_the_grid_top_are_exact():
    """A total near the solved grid's top took in the truncation's bound, and one past it a
    recursion cut off after 60 rolls: with free keeps, from 1 6 6 6 6 and 46750 kept, the
    advisor said keep the 1 and roll four dice; keeping all five (48050, which must roll on)
    is worth about 6500 more."""
    adv = get_advisor("farkle-five", free_keep=True)
    game = get_game("farkle-five", free_keep=True)
    wide = FarkleAdvisor(game, skip_penalty=adv.skip_penalty, margin=100_000)
    for t in (40_000, 45_000, 46_000, 46_750, 48_050, 60_050):
        for n in range(1, 6):
            assert adv.roll_value(n, t) == pytest.approx(wide.roll_value(n, t), abs=1e-6)
    best = adv.advise([1, 6, 6, 6, 6], 46_750)[0]
    assert (best.keep, best.then) == ((1, 6, 6, 6, 6), "roll")
    assert get_advisor("morning-roll").roll_value(6, 60_000) == pytest.approx(
        FarkleAdvisor(get_game("morning-roll"), margin=80_000).roll_value(6, 60_000), abs=1e-6
    )
