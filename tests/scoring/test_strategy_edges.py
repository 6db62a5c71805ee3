"""The advisor's own checks and bounds: ``truncation_gap`` measures what a too-small grid
costs, and ``roll_value`` takes only the dice a roll can have."""

import pytest

from scoring import FarkleAdvisor, get_advisor, get_game


@pytest.mark.parametrize("name", ["morning-roll", "farkle-five"])
def test_a_grid_too_small_for_the_forced_chains_shows_a_gap_that_bounds_its_error(name):
    """With a 100-point margin the chains that may not bank (2500 combos, M5; totals ending
    in 50, F2) are cut short: the gap is large, and every value of that small grid lies within
    it of the exact one (the shipped advisor, checked against independent solvers in
    test_strategy.py and test_strategy_audit_farkle_advisor.py)."""
    exact = get_advisor(name)
    small = FarkleAdvisor(get_game(name), margin=100, skip_penalty=exact.skip_penalty)
    gap = small.truncation_gap()
    assert gap > 100
    worst = max(
        abs(small.roll_value(n, t) - exact.roll_value(n, t))
        for n in range(1, exact.n + 1)
        for t in range(0, exact.cutoff, 50)
    )
    assert 0 < worst <= gap + 1e-9
    assert exact.truncation_gap() < 1e-9


@pytest.mark.parametrize(("name", "n_dice"), [("morning-roll", 6), ("greed", 5)])
def test_roll_value_takes_one_die_up_to_the_games_dice(name, n_dice):
    adv = get_advisor(name)
    assert adv.roll_value(n_dice, 0) == adv.expected_turn_score
    for n in (0, n_dice + 1):
        with pytest.raises(
            ValueError, match=f"{name}: dice to roll must be 1 to {n_dice}, got {n}"
        ):
            adv.roll_value(n, 0)


@pytest.mark.parametrize("on_board", [False, True])
def test_the_summary_says_whether_the_player_is_on_the_board(on_board):
    """``dicecam strategy --json``: the values of a player below the entry (G3: 300) are lower,
    and the summary says which player they are for."""
    d = get_advisor("greed", on_board=on_board).to_dict()
    assert d["on_board"] is on_board
    assert d["expected_turn_score"] == get_advisor("greed", on_board=on_board).expected_turn_score
