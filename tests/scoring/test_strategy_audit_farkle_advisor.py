"""The strategy advisor for Morning Roll and five-dice Farkle against the audit's model of
both games (:mod:`dicecam_testing.farkle_audit`: scored from the rule texts and solved by
backward induction; checked itself in ``test_strategy_audit_farkle_model.py``): ``roll_value``,
the skipped turn's penalty, and every option of ``advise`` (keep, bank or roll, value, the
move advised), through the API and ``dicecam advise``, with the house rules too."""

import json

import pytest

from scoring import get_advisor
from service.cli import main

from dicecam_testing.farkle_audit import (
    BOARD,
    CAP,
    STEP,
    json_key,
    options,
    rolls,
    skip_value,
    solver,
)


@pytest.mark.parametrize(("game", "on_board"), BOARD)
def test_roll_values_and_the_turn_score_match(game, on_board):
    """``R(n, t)`` for every dice count, totals 0 to 3000 (on and off the board: Morning Roll
    has no entry score, so both are the same)."""
    mine = solver(game, on_board, CAP[game])
    adv = get_advisor(game, on_board=on_board)
    for n in mine.R:
        for t in range(0, 3050, STEP):
            assert adv.roll_value(n, t) == pytest.approx(mine.R[n][t // STEP], abs=1e-9), (n, t)
    assert adv.expected_turn_score == pytest.approx(mine.R[mine.n_dice][0], abs=1e-9)
    assert adv.bank_value(450) == mine.bank(450, False)
    assert adv.bank_value(1000, hot=True) == pytest.approx(mine.bank(1000, True), abs=1e-9)


@pytest.mark.parametrize(("game", "on_board"), BOARD)
def test_every_option_advised_matches(game, on_board):
    """Each roll of 1 to 3 dice at totals around the thresholds, and of more dice at a few:
    the same keeps, each keep's bank and roll values, and the same best move."""
    mine = solver(game, on_board, CAP[game])
    adv = get_advisor(game, on_board=on_board)
    near = [0, 50, 100, 150, 200, 250, 300, 350, 400, 450, 500, 550, 1000, 1450, 1550, 3000]
    checked = 0
    for n in range(1, mine.n_dice + 1):
        for roll, _p in rolls(n):
            for banked in near if n <= 3 else (0, 1000):
                want = options(mine, roll, banked)
                got = adv.advise(list(roll), banked)
                assert {
                    (o.keep, o.then, o.forced_reroll): o.expected for o in got
                } == pytest.approx(want, abs=1e-9)
                if want:
                    assert got[0].expected == pytest.approx(max(want.values()), abs=1e-9)
                    checked += 1
    assert checked > 1000


@pytest.mark.parametrize("on_board", [True, False])
def test_the_skipped_turn_is_worth_an_on_board_turn(on_board):
    """F3 valued as points per turn slot: on the board, the skipped turn is worth the turn
    itself. A pass worth making banks 500 or more (F7), so the turn it skips is an on-board
    turn for a player not yet on the board too (the advisor used the fixed point of an
    off-board turn there, 199.35, and advised banking hot dice at 1500 and 1600)."""
    lam = skip_value()
    assert get_advisor("farkle-five", on_board=on_board).skip_penalty == pytest.approx(
        lam, abs=1e-9
    )
    assert lam == pytest.approx(solver("farkle-five", True, CAP["farkle-five"]).R[5][0], abs=1e-9)


@pytest.mark.parametrize(("banked", "roll"), [(1400, (1,)), (1300, (1, 1)), (500, (1, 1, 1))])
def test_not_on_board_hot_dice_at_1500_roll_on(banked, roll, capsys):
    """1500 on hot dice: banking is worth 1500 - lam (on the board from then on), rolling five
    more (1289.66) is worth more; ``dicecam advise --not-on-board`` says so."""
    mine = options(solver("farkle-five", False, CAP["farkle-five"]), roll, banked)
    assert mine[roll, "bank", False] == pytest.approx(1500 - skip_value(), abs=1e-9)
    assert mine[roll, "roll", False] > mine[roll, "bank", False]
    args = ["advise", "--game", "farkle-five", "--not-on-board", "--json"]
    assert main([*args, "--banked", str(banked), *map(str, roll)]) == 0
    got = json.loads(capsys.readouterr().out)["options"]
    assert [(tuple(o["keep"]), o["then"]) for o in got] == [(roll, "roll"), (roll, "bank")]
    assert {json_key(o): o["expected"] for o in got} == pytest.approx(mine, abs=1e-9)


def test_morning_roll_boxcars_and_straight_from_the_cli(capsys):
    """The 2500 combos offer only the forced re-roll, worth R(6, t + 2500); the straight's
    1 and 5 may be kept alone and banked (M5)."""
    mine = solver("morning-roll", True, CAP["morning-roll"])
    for roll in ((2, 2, 4, 4, 6, 6), (1, 2, 3, 4, 5, 6)):
        assert main(["advise", "--json", "--banked", "300", *map(str, roll)]) == 0
        got = json.loads(capsys.readouterr().out)["options"]
        combo = [o for o in got if o["forced_reroll"]]
        assert [(o["keep"], o["then"]) for o in combo] == [(list(roll), "roll")]
        assert combo[0]["expected"] == pytest.approx(mine.R[6][(300 + 2500) // STEP], abs=1e-9)
        assert {json_key(o): o["expected"] for o in got} == pytest.approx(
            options(mine, roll, 300), abs=1e-9
        )


@pytest.mark.parametrize(
    ("variant", "rules", "on_board"),
    [
        ("morning-roll/three_pairs_any", {"three_pairs_any": True}, True),
        ("farkle-five/free_keep", {"free_keep": True}, True),
        ("farkle-five/free_keep", {"free_keep": True}, False),
    ],
)
def test_house_rules_match(variant, rules, on_board):
    """The (option) readings: four of a kind and a pair, and six of a kind, as boxcars (M4);
    any scoring dice kept in five-dice Farkle (F1). Roll values, the skip penalty and every
    option on 1 to 3 dice (and 4 to 6 at two totals)."""
    game = variant.split("/")[0]
    mine = solver(variant, on_board, CAP[game])
    adv = get_advisor(game, on_board=on_board, **rules)
    assert adv.skip_penalty == pytest.approx(mine.skip, abs=1e-9)
    for n in mine.R:
        for t in range(0, 3050, 250):
            assert adv.roll_value(n, t) == pytest.approx(mine.R[n][t // STEP], abs=1e-9), (n, t)
    for n in mine.R:
        for roll, _p in rolls(n):
            for banked in (0, 150, 450, 1000) if n <= 3 else (0, 1000):
                want = options(mine, roll, banked)
                got = adv.advise(list(roll), banked)
                assert {(o.keep, o.then, o.forced_reroll): o.expected for o in got} == (
                    pytest.approx(want, abs=1e-9)
                ), (roll, banked)
