"""The audit's own model of Morning Roll and five-dice Farkle
(:mod:`dicecam_testing.farkle_audit`), checked before it judges the advisor: its scorer keeps
and scores the rule texts' examples (morning-roll.txt, farkle-five-dice.txt, READINGS.md M1-M7
and F1-F7), its solver's cap changes no value, and a solver that leaves F2 out disagrees with
the advisor (the comparison has teeth). ``test_strategy_audit_farkle_advisor.py`` compares
the advisor with it."""

import pytest

from scoring import get_advisor

from dicecam_testing.farkle_audit import (
    CAP,
    FORCED,
    FREE,
    GAMES,
    STEP,
    WIN,
    farkle_keeps,
    morning_keeps,
    options,
    solver,
)


@pytest.mark.parametrize(
    ("game", "roll", "keeps"),
    [
        # morning-roll.txt's examples: 1 of 1,2,2,3,5,6 is 100; 1 and 4s of 1,4,4,4,6 are 500
        ("morning-roll", (1, 2, 2, 3, 5, 6), {(1,): 100, (5,): 50, (1, 5): 150}),
        ("morning-roll", (1, 4, 4, 4, 6), {(1,): 100, (4, 4, 4): 400, (1, 4, 4, 4): 500}),
        ("morning-roll", (2, 2, 3, 4, 6), {}),  # Tom busts
        ("morning-roll", (3, 4), {}),  # Mike busts
        # M3: four 1s as 2000; M1: 1s of a triple as singles too; M6: a pair of 5s is 100
        (
            "morning-roll",
            (1, 1, 1, 1),
            {(1,): 100, (1, 1): 200, (1, 1, 1): 1000, (1, 1, 1, 1): 2000},
        ),
        ("morning-roll", (5, 5, 2), {(5,): 50, (5, 5): 100}),
        ("morning-roll", (6, 6, 6, 6, 6, 6), {(6,) * k: 600 * 2 ** (k - 3) for k in (3, 4, 5, 6)}),
        # M4: four of a kind and a pair is no boxcars; M2: three of the four 4s keep as 400
        (
            "morning-roll",
            (2, 4, 4, 4, 4, 2),
            {(4, 4, 4): 400, (4, 4, 4, 4): 800},
        ),
        # farkle-five-dice.txt: three twos, a five and a one are 350 (all kept, F1)
        ("farkle-five", (2, 2, 2, 5, 1), {(1, 2, 2, 2, 5): 350}),
        ("farkle-five", (4, 4, 4, 2, 6), {(4, 4, 4): 400}),
        ("farkle-five", (1, 1, 1, 1, 5), {(1, 1, 1, 1, 5): 2050}),  # four 1s 2000
        ("farkle-five", (5, 5, 5, 5, 5), {(5,) * 5: 2000}),  # F5
        ("farkle-five", (2, 2, 2, 2, 2), {(2,) * 5: 800}),
        ("farkle-five", (1, 2, 3, 4, 5), {(1, 2, 3, 4, 5): 500}),  # F6: Big Roll
        ("farkle-five", (1, 2, 3, 4), {(1,): 100}),  # no Big Roll on four dice
        ("farkle-five", (2, 3, 4, 6, 6), {}),
    ],
)
def test_the_scorer_here_follows_the_texts(game, roll, keeps):
    got = {kept: pts for kept, pts, kind in GAMES[game][1](tuple(sorted(roll)))}
    assert got == {tuple(sorted(k)): v for k, v in keeps.items()}


def test_the_scorer_here_forces_a_re_roll_after_2500_and_wins_on_five_1s():
    """M5: boxcars and the straight keep as 2500 and roll on; from a straight the 1 and/or the
    5 alone are ordinary keeps. F4: five 1s win with 5000."""
    straight = {(k, p, kind) for k, p, kind in morning_keeps((1, 2, 3, 4, 5, 6))}
    assert straight == {
        ((1, 2, 3, 4, 5, 6), 2500, FORCED),
        ((1,), 100, FREE),
        ((5,), 50, FREE),
        ((1, 5), 150, FREE),
    }
    boxcars = {(k, p, kind) for k, p, kind in morning_keeps((1, 1, 3, 3, 6, 6))}
    assert boxcars == {((1, 1, 3, 3, 6, 6), 2500, FORCED), ((1,), 100, FREE), ((1, 1), 200, FREE)}
    assert farkle_keeps((1, 1, 1, 1, 1)) == [((1, 1, 1, 1, 1), 5000, WIN)]


@pytest.mark.parametrize("game", ["morning-roll", "farkle-five"])
def test_a_higher_cap_changes_no_value(game):
    """Past the cap a turn is valued at its total; a cap a quarter (Morning Roll) or twice
    (Farkle) higher gives the same values to 1e-9."""
    cap = CAP[game]
    low, high = (
        solver(game, True, cap),
        solver(game, True, cap * 5 // 4 if game == "morning-roll" else 2 * cap),
    )
    for n in low.R:
        for i in range(0, 3000 // STEP + 1):
            assert low.R[n][i] == pytest.approx(high.R[n][i], abs=1e-9)


def test_a_solver_that_forgets_f2_disagrees():
    """The comparison has teeth: banking totals ending in 50 (F2 left out) changes values
    and advice the advisor gives."""
    broken = solver("farkle-five", True, CAP["farkle-five"], f2=False)
    adv = get_advisor("farkle-five")
    assert abs(adv.expected_turn_score - broken.R[5][0]) > 1
    want = options(broken, (1, 5, 2), 0)
    got = {(o.keep, o.then) for o in adv.advise([1, 5, 2], 0)}
    assert set(want) == {((1, 5), "roll", False), ((1, 5), "bank", False)}
    assert got == {((1, 5), "roll")}
