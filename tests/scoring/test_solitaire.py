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
    return SolitaireSheet(rejects={f: list(rejects).count(f) for f in rejects}, marks=marks)


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
    g.sheets["ann"] = SolitaireSheet(rejects={1: 7, 5: 1, 6: 1})
    g.sheets["bob"] = SolitaireSheet(rejects={1: 7, 5: 1, 6: 1}, marks={7: 6})
    g.new_roll([1, 3, 3, 4, 4])
    g.choose("ann", 1, [7, 7])
    g.choose("bob", 1, [7, 7])
    assert g.finished and g.winners == ["bob"]


def test_a_sheets_counts_cannot_be_set_from_outside():
    """marks and rejects were plain dicts: a negative mark, a face 7 or a ninth reject scored
    nonsense. They are read-only views now; the sheet changes through apply and add_reject."""
    s = sheet_with([1, 1], {7: 6})
    for change in (
        lambda: s.marks.__setitem__(7, -3),
        lambda: s.marks.update({13: 1}),
        lambda: s.rejects.__setitem__(7, 1),
        lambda: s.rejects.update({1: 9}),
        lambda: s.rejects.pop(1),
    ):
        with pytest.raises((TypeError, AttributeError)):
            change()
    for name in ("free_rides", "turns"):
        with pytest.raises(AttributeError):
            setattr(s, name, -1)
    assert dict(s.marks) == {t: 6 if t == 7 else 0 for t in range(2, 13)}
    assert dict(s.rejects) == {1: 2, 2: 0, 3: 0, 4: 0, 5: 0, 6: 0} and s.score == 30
    s.apply([1, 3, 4, 3, 4], 1, [7, 7])  # the views follow the sheet
    assert s.marks[7] == 8 and s.rejects[1] == 3 and s.turns == 1 and s.score == 90


@pytest.mark.parametrize(
    ("counts", "message"),
    [
        ({"marks": {7: -1}}, "expected a whole number from 0 for combo total 7, got -1"),
        ({"marks": {7: 2.5}}, "expected a whole number from 0 for combo total 7, got 2.5"),
        ({"marks": {13: 1}}, "expected a combo total 2 to 12, got 13"),
        ({"rejects": {7: 1}}, "expected a reject face 1 to 6, got 7"),
        ({"rejects": {True: 1}}, "expected a reject face 1 to 6, got True"),
        ({"rejects": {1: 9}}, "expected 8 rejects of one face at most, and of one face only"),
        ({"rejects": {1: 8, 2: 8}}, "expected 8 rejects of one face at most, and of one face"),
        ({"rejects": {1: 1, 2: 1, 3: 1, 4: 1}}, "three reject faces at most \\(S3\\), got"),
        ({"rejects": [1, 1]}, "expected a mapping of reject face to count, got \\[1, 1\\]"),
        ({"free_rides": -2}, "expected free_rides a whole number from 0, got -2"),
    ],
)
def test_a_sheet_carried_over_is_made_only_with_counts_a_game_can_reach(counts, message):
    with pytest.raises(ValueError, match=message):
        SolitaireSheet(**counts)


def test_a_sheet_carried_over_to_its_eighth_reject_is_finished():
    s = SolitaireSheet(rejects={4: 8, 2: 3}, marks={6: 5, 8: 11}, free_rides=2)
    assert s.finished and s.free_rides == 2 and s.score == 0 + 40 * 5
    with pytest.raises(ValueError, match="game is over"):
        s.options([1, 2, 3, 4, 5])


def test_players_tied_on_the_highest_score_all_win():
    """solitaire-dice.txt: "The game is over when all the players are done and the winner is
    the player with the highest score." Players level on it are all named, in seat order."""
    g = SolitaireGame(["ann", "bob", "cy"])
    for name in ("ann", "bob", "cy"):
        g.sheets[name] = SolitaireSheet(rejects={1: 7, 5: 1, 6: 1})
    g.new_roll([1, 3, 3, 4, 4])  # the eighth reject of 1 ends every player's game
    g.choose("ann", 1, [7, 7])
    g.choose("bob", 1, [7, 7])
    g.choose("cy", 1, [6, 8])
    assert g.finished
    assert [g.sheets[p].score for p in ("ann", "bob", "cy")] == [-200, -200, -400]
    assert g.winners == ["ann", "bob"]


def test_a_game_needs_a_player():
    """solitaire-dice.txt: "Start the game and add human and computer players"; a game of
    nobody was over before its first roll and asking its winners crashed on an empty max()."""
    with pytest.raises(ValueError, match=r"expected a list of distinct player names, got \[\]"):
        SolitaireGame([])
    assert SolitaireGame(["ann"]).active == ["ann"]
