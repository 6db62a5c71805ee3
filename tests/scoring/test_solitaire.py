"""Solitaire Dice: splits, rejects and free rides, the score sheet, shared-roll games."""

import pytest

from scoring import SolitaireGame, SolitaireSheet, get_game


def splits(options):
    return {(o["reject"], tuple(o["combos"])) for o in options}


def test_the_texts_first_roll_has_exactly_its_four_splits():
    opts = get_game("solitaire-dice").options([4, 4, 6, 1, 4])
    assert splits(opts) == {(4, (5, 10)), (4, (7, 8)), (6, (5, 8)), (1, (8, 10))}
    assert all(o["score_after"] == -400 and not o["free_ride"] for o in opts)


def sheet_with(rejects=(), marks=None):
    s = SolitaireSheet()
    for f in rejects:
        s.rejects[f] += 1
    for total, m in (marks or {}).items():
        s.marks[total] = m
    return s


def test_after_three_rejects_a_roll_must_reject_one_of_them():  # S3
    s = sheet_with([1, 5, 6])
    opts = s.options([1, 2, 3, 4, 6])
    assert {o["reject"] for o in opts} == {1, 6}


def test_free_ride_when_no_reject_face_shows():
    s = sheet_with([1, 5, 6])
    opts = s.options([2, 2, 3, 4, 4])
    assert opts and all(o["free_ride"] and o["reject"] is None for o in opts)
    # any four of the five dice, paired: (2,2,3,4)->(4,7),(5,6); (2,2,4,4)->(4,8),(6,6); ...
    assert (None, (6, 6)) in splits(opts) and (None, (4, 8)) in splits(opts)
    s.apply([2, 2, 3, 4, 4], None, [6, 6])
    assert s.free_rides == 1 and s.marks[6] == 2 and sum(s.rejects.values()) == 3


def test_fewer_than_three_reject_faces_allow_any_reject():
    s = sheet_with([1, 1, 5])
    assert {o["reject"] for o in s.options([2, 3, 4, 5, 6])} == {2, 3, 4, 5, 6}


@pytest.mark.parametrize(
    ("marks", "score"),
    [
        ({5: 1, 6: 1, 7: 5, 8: 1, 9: 1, 10: 1}, -1000),  # the text's first sheet
        ({5: 1, 6: 1, 7: 6, 8: 1, 9: 1, 10: 1}, 30 - 1000),
        ({7: 11}, 150),  # the 11th mark adds nothing
        ({7: 10}, 150),
        ({2: 10, 12: 6}, 600),
        ({}, 0),
    ],
)
def test_score_sheet(marks, score):  # S1, S2
    assert sheet_with(marks=marks).score == score


def test_eighth_reject_ends_the_game_but_its_combos_count():  # S4
    s = sheet_with([1] * 7 + [5, 6])
    opt = [o for o in s.options([1, 3, 3, 4, 4]) if o["reject"] == 1 and o["combos"] == [7, 7]]
    assert opt and opt[0]["ends_game"]
    s.apply([1, 3, 3, 4, 4], 1, [7, 7])
    assert s.finished and s.marks[7] == 2
    with pytest.raises(ValueError, match="game is over"):
        s.options([1, 2, 3, 4, 5])


def test_illegal_split_and_bad_roll_are_rejected():
    s = SolitaireSheet()
    with pytest.raises(ValueError, match="not legal"):
        s.apply([1, 2, 3, 4, 5], 6, [3, 7])
    with pytest.raises(ValueError, match="expected 5 dice, got 4"):
        s.options([1, 2, 3, 4])
    with pytest.raises(ValueError, match="solitaire-dice: a die face must be 1 to 6, got 9"):
        get_game("solitaire-dice").options([1, 2, 3, 4, 9])
    assert s.turns == 0 and s.score == 0  # nothing lost


def test_multi_player_game_on_shared_rolls():
    g = SolitaireGame(["ann", "bob"])
    g.new_roll([4, 4, 6, 1, 4])
    g.choose("ann", 1, [8, 10])
    with pytest.raises(ValueError, match="still to choose"):
        g.new_roll([1, 2, 3, 4, 5])
    with pytest.raises(ValueError, match="already chosen"):
        g.choose("ann", 4, [5, 10])
    g.choose("bob", 4, [7, 8])
    g.new_roll([2, 2, 2, 2, 2])
    g.choose("ann", 2, [4, 4])
    g.choose("bob", 2, [4, 4])
    assert g.sheets["ann"].marks[4] == 2 and g.sheets["bob"].marks[8] == 1
    assert not g.finished and g.winners == []
    with pytest.raises(ValueError, match="unknown player"):
        g.choose("cy", 1, [2, 2])


def test_game_ends_when_every_player_is_done():
    g = SolitaireGame(["ann", "bob"])
    for p in ("ann", "bob"):
        g.sheets[p].rejects.update({1: 7, 5: 1, 6: 1})
    g.sheets["bob"].marks[7] = 6
    g.new_roll([1, 3, 3, 4, 4])
    g.choose("ann", 1, [7, 7])
    g.choose("bob", 1, [7, 7])
    assert g.finished and g.winners == ["bob"]
