"""Property tests (hypothesis) over random rolls and random turns."""

from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import FarkleTurn, ScoringError, get_game
from scoring.dice import is_submultiset

FARKLE = ["morning-roll", "farkle-five", "greed"]
VARIANTS = [
    ("morning-roll", {}),
    ("morning-roll", {"three_pairs_any": True}),
    ("farkle-five", {}),
    ("farkle-five", {"free_keep": True}),
    ("greed", {}),
]


def roll_for(n_max):
    return st.integers(1, n_max).flatmap(
        lambda n: st.lists(st.integers(1, 6), min_size=n, max_size=n)
    )


@settings(max_examples=300, deadline=None)
@given(variant=st.sampled_from(VARIANTS), dice=roll_for(6))
def test_a_keep_never_scores_dice_that_were_not_rolled(variant, dice):
    name, rules = variant
    game = get_game(name, **rules)
    dice = dice[: game.n_dice]
    keeps = game.keeps(dice)
    for k in keeps:
        assert is_submultiset(k.dice, dice)
        assert k.points > 0 and k.points % 50 == 0
        assert list(k.dice) == sorted(k.dice)
    assert game.is_bust(dice) == (not keeps)
    assert game.best_score(dice) == max((k.points for k in keeps), default=0)
    if game.one_keep:
        assert len(keeps) <= 1


@settings(max_examples=300, deadline=None)
@given(variant=st.sampled_from(VARIANTS), dice=roll_for(6))
def test_adding_a_1_never_lowers_the_best_score(variant, dice):
    name, rules = variant
    game = get_game(name, **rules)
    dice = dice[: game.n_dice - 1]
    if dice and not game.one_keep:
        assert game.best_score(dice + [1]) >= game.best_score(dice) + 100


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from(FARKLE), data=st.data())
def test_random_turns_keep_their_invariants(name, data):
    game = get_game(name)
    turn = FarkleTurn(game)
    for _ in range(12):
        if turn.finished:
            break
        dice = data.draw(
            st.lists(st.integers(1, 6), min_size=turn.dice_left, max_size=turn.dice_left)
        )
        before = turn.turn_points
        turn.roll(dice)
        if turn.state == "bust":
            assert turn.turn_points == 0 and game.is_bust(dice)
            break
        keep = data.draw(st.sampled_from(turn.keeps))
        turn.keep(list(keep.dice), forced_reroll=keep.forced_reroll)
        assert turn.turn_points == before + keep.points
        assert 1 <= turn.dice_left <= game.n_dice
        if turn.state == "awaiting_roll" and not turn.must_roll and data.draw(st.booleans()):
            assert turn.bank() == turn.turn_points
    if turn.state == "awaiting_roll" and turn.must_roll:
        try:
            turn.bank()
        except ScoringError as exc:
            assert "cannot bank" in str(exc)
        else:
            raise AssertionError("banked while a re-roll was due")
