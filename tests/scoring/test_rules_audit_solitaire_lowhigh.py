"""An audit of Solitaire Dice and Low-High against their rule texts (solitaire-dice.txt,
low-high.txt, READINGS.md S1-S4, L1-L4): each row names the rule line it comes from. Rows
test_solitaire.py and test_lowhigh.py already hold are not repeated."""

import pytest

from scoring import COMBO_VALUES, LowHighGame, LowHighTurn, SolitaireGame, SolitaireSheet, get_game


def sheet_with(rejects=(), marks=None):
    return SolitaireSheet(rejects={f: list(rejects).count(f) for f in rejects}, marks=marks)


def splits(options):
    return {(o["reject"], tuple(o["combos"])) for o in options}


# --- Solitaire Dice: the scoring chart, row by row ---------------------------------------------
@pytest.mark.parametrize(
    ("total", "value"),
    # S1: "2 and 12 = 100, 3 and 11 = 70, 4 and 10 = 60, 5 and 9 = 50, 6 and 8 = 40, 7 = 30"
    [(2, 100), (3, 70), (4, 60), (5, 50), (6, 40), (7, 30)]
    + [(8, 40), (9, 50), (10, 60), (11, 70), (12, 100)],
)
@pytest.mark.parametrize(
    ("marks", "times_value", "opened"),
    [
        (0, 0, False),  # a row never picked costs nothing
        (1, 0, True),  # "The first time you pick a number ... you lose 200 points"
        (4, 0, True),  # S2: "costs 200 until it has 5 marks"
        (5, 0, False),  # "Once you have selected that combo five times, you get those points back"
        (6, 1, False),  # "Each time ... past the fifth, the player scores points"
        (9, 4, False),
        (10, 5, False),  # S2: "Marks 6 to 10 score"
        (12, 5, False),  # S2: "the 11th and later score nothing"
    ],
)
def test_every_row_of_the_chart_at_its_thresholds(total, value, marks, times_value, opened):
    expected = times_value * value - (200 if opened else 0)
    assert COMBO_VALUES[total] == value
    assert SolitaireSheet.combo_score(total, marks) == expected
    assert sheet_with(marks={total: marks}).score == expected


@pytest.mark.parametrize(
    ("marks", "score"),
    [
        # "selected "7" ... 11 times ... only worth 150", the other five rows still -200
        ({5: 1, 6: 1, 7: 11, 8: 1, 9: 1, 10: 1}, 150 - 1000),
        ({2: 1, 12: 4, 7: 6}, -400 + 30),  # negative rows add up with a scoring one
        ({2: 5, 12: 5, 7: 5}, 0),  # every opened row at exactly five: nothing owed
        ({6: 8, 8: 3}, 3 * 40 - 200),
    ],
)
def test_final_score_adds_every_row_negative_ones_too(marks, score):
    assert sheet_with(marks=marks).score == score


# --- Solitaire Dice: splits, rejects and free rides ---------------------------------------------
@pytest.mark.parametrize(
    ("rejects", "roll", "legal"),
    [
        # "split them into one reject and two combos": five 3s leave one split
        ((), [3, 3, 3, 3, 3], {(3, (6, 6))}),
        # S3: three reject faces and none shows: a free ride, one die unused
        ((1, 5, 6), [3, 3, 3, 3, 3], {(None, (6, 6))}),
        ((3, 5, 6), [3, 3, 3, 3, 3], {(3, (6, 6))}),
        # S3: "Until three reject faces are chosen, any die may be rejected"
        ((2, 2), [1, 1, 6, 6, 6], {(1, (7, 12)), (6, (7, 7)), (6, (2, 12))}),
        # "you must reject a 1, 5, or 6": the 2 may not go, only the 5
        ((1, 5, 6), [2, 2, 3, 4, 5], {(5, (4, 7)), (5, (5, 6))}),
        # a free ride: any four of the five dice make the two combos
        (
            (1, 5, 6),
            [2, 3, 3, 4, 4],
            {(None, c) for c in [(5, 7), (6, 6), (6, 7), (5, 8), (7, 7), (6, 8)]},
        ),
    ],
)
def test_legal_splits(rejects, roll, legal):
    opts = sheet_with(rejects).options(roll)
    assert splits(opts) == legal
    assert all(o["free_ride"] == (o["reject"] is None) for o in opts)


def test_a_free_ride_is_not_allowed_before_three_reject_faces():
    """S3: a free ride only comes with three reject faces and none of them in the roll."""
    s = sheet_with([1, 5])
    with pytest.raises(ValueError, match="reject None with combos \\[6, 6\\] is not legal"):
        s.apply([2, 2, 3, 4, 4], None, [6, 6])
    assert s.free_rides == 0 and s.turns == 0 and s.marks[6] == 0


def test_one_roll_may_mark_the_same_combo_twice():
    """ "imagine a roll of five 3s. You are going to have to take a 6"": both combos are 6s."""
    s = SolitaireSheet()
    s.apply([3, 3, 3, 3, 3], 3, [6, 6])
    assert s.marks[6] == 2 and s.rejects[3] == 1 and s.score == -200


# --- Solitaire Dice: the end of the game ---------------------------------------------------------
def test_seventh_reject_goes_on_and_the_eighth_ends_mid_roll():
    """ "A player may only reject a single number seven times. Once a player rejects a single
    number eight times, the game is over for that player." (S4: that roll's combos count)"""
    s = sheet_with([4] * 6 + [1, 2])
    (seventh,) = [o for o in s.options([4, 1, 1, 1, 1]) if o["reject"] == 4]
    assert not seventh["ends_game"]
    s.apply([4, 1, 1, 1, 1], 4, [2, 2])
    assert not s.finished and s.rejects[4] == 7
    # forced: three faces, and the only one shown is the 4 at seven rejects
    opts = s.options([4, 6, 6, 6, 6])
    assert splits(opts) == {(4, (12, 12))} and opts[0]["ends_game"]
    assert opts[0]["score_after"] == -200 - 200  # the 2 row (two marks) and the 12 row
    s.apply([4, 6, 6, 6, 6], 4, [12, 12])
    assert s.finished and s.marks[12] == 2 and s.score == -400


def test_a_finished_player_sits_out_and_the_game_ends_with_the_last():
    """ "The game continues for the other players. The game is over when all the players are
    done and the winner is the player with the highest score.\""""
    g = SolitaireGame(["ann", "bob"])
    g.sheets["ann"] = SolitaireSheet(rejects={1: 7, 5: 1, 6: 1})
    g.new_roll([1, 2, 2, 3, 3])
    g.choose("ann", 1, [4, 6])
    g.choose("bob", 2, [3, 6])
    assert g.active == ["bob"] and not g.finished
    g.new_roll([2, 2, 3, 3, 4])  # only bob chooses now
    with pytest.raises(ValueError, match="ann's game is over"):
        g.choose("ann", None, [4, 6])
    g.choose("bob", 2, [5, 7])
    for _ in range(5):  # bob's sheet carried on to seven rejects of 2
        g.sheets["bob"].add_reject(2)
    g.new_roll([2, 3, 3, 3, 3])
    g.choose("bob", 2, [6, 6])
    assert g.finished and g.winners == ["ann"]  # ann -400 (4, 6), bob -800 (3, 5, 6, 7)
    with pytest.raises(ValueError, match="the game is over"):
        g.new_roll([1, 2, 3, 4, 5])


# --- Solitaire Dice: inputs that are not a choice ------------------------------------------------
@pytest.mark.parametrize(
    ("reject", "combos", "message"),
    [
        (True, [5, 8], "expected a reject face 1 to 6 \\(None: a free ride\\), got True"),
        (3.0, [4, 8], "expected a reject face 1 to 6 \\(None: a free ride\\), got 3.0"),
        (7, [4, 8], "expected a reject face 1 to 6 \\(None: a free ride\\), got 7"),
        (0, [4, 8], "expected a reject face 1 to 6 \\(None: a free ride\\), got 0"),
        (3, None, "expected two combo sums, each 2 to 12, got None"),
        (3, ["a", 4], "expected two combo sums, each 2 to 12, got \\['a', 4\\]"),
        (3, "48", "expected two combo sums, each 2 to 12, got '48'"),
        (3, [4.0, 8.0], "expected two combo sums, each 2 to 12, got \\[4.0, 8.0\\]"),
        (3, [4, 8, 1], "expected two combo sums, each 2 to 12, got \\[4, 8, 1\\]"),
    ],
)
def test_a_split_that_is_not_a_face_and_two_sums_is_refused(reject, combos, message):
    """A bool or float reject was taken as a face (True as 1), and None or mixed combos
    raised a bare TypeError; nothing is marked."""
    s = SolitaireSheet()
    with pytest.raises(ValueError, match=message):
        s.apply([1, 2, 3, 4, 4], reject, combos)
    assert s.turns == 0 and sum(s.rejects.values()) == 0 and sum(s.marks.values()) == 0


def test_no_reject_follows_the_eighth():
    """S4: the eighth reject ends the game, so a sheet carried over cannot hold a ninth."""
    s = SolitaireSheet()
    for face in [1] * 8:
        s.add_reject(face)
    with pytest.raises(ValueError, match="game is over .* no reject of 1 can follow"):
        s.add_reject(1)
    assert s.rejects[1] == 8


@pytest.mark.parametrize(
    ("total", "marks", "message"),
    [
        (13, 1, "a combo total must be 2 to 12, got 13"),
        (1, 6, "a combo total must be 2 to 12, got 1"),
        (7, 2.5, "a combo's marks must be a whole number from 0, got 2.5"),
        (7, -1, "a combo's marks must be a whole number from 0, got -1"),
    ],
)
def test_combo_score_names_a_row_that_is_not_on_the_chart(total, marks, message):
    """A total 13 scored -200 at one mark and raised KeyError at six."""
    with pytest.raises(ValueError, match=message):
        SolitaireSheet.combo_score(total, marks)


def test_players_given_as_one_string_are_refused():
    """ "ab" made two players, 'a' and 'b'."""
    with pytest.raises(ValueError, match="expected a list of distinct player names, got 'ab'"):
        SolitaireGame("ab")


# --- Low-High: a turn, step by step --------------------------------------------------------------
def play(rules, steps):
    turn = LowHighTurn(get_game("low-high", **rules))
    for op, arg in steps:
        turn.roll(arg) if op == "roll" else turn.keep(arg)
    return turn


@pytest.mark.parametrize(
    ("rules", "steps", "good", "bad", "state", "score"),
    [
        # "first roll all thirteen dice ... You must choose a set to keep": all the same, one set;
        # no unlocked die is left, so the turn is over (+1 per good die)
        ({}, [("roll", [5] * 13), ("keep", 5)], [5] * 13, [], "over", 13),
        ({"scoring": "pips"}, [("roll", [5] * 13), ("keep", 5)], [5] * 13, [], "over", 65),
        # "set aside any results that are equal to or lower than a set you've already kept":
        # after keeping a 6 every re-rolled die goes bad (L1), and the turn ends (L3)
        (
            {},
            [("roll", [6] + [1] * 12), ("keep", 6), ("roll", [6, 5] * 6)],
            [6],
            [6, 5] * 6,
            "over",
            -11,
        ),
        # "discard one good die for each bad die": as many good as bad scores 0
        (
            {},
            [("roll", [2] * 3 + [1] * 10), ("keep", 2), ("roll", [1, 2, 2] + [4] * 7), ("keep", 4)],
            [2, 2, 2] + [4] * 7,
            [1, 2, 2],
            "over",
            10 - 3,
        ),
        (
            {},
            [("roll", [3] * 3 + [1] * 10), ("keep", 3), ("roll", [1, 2, 3] + [6] * 7)],
            [3, 3, 3],
            [1, 2, 3],
            "awaiting_keep",
            0,
        ),
        # pips, ascending: "The lowest results in your good track are canceled out first"
        (
            {"scoring": "pips"},
            [("roll", [2] * 2 + [1] * 11), ("keep", 2), ("roll", [1] + [5] * 10), ("keep", 5)],
            [2, 2] + [5] * 10,
            [1],
            "over",
            2 + 50,  # a 2 cancels the bad 1
        ),
        # "Alternately, you can cancel out the highest results first for a lower scoring game"
        (
            {"scoring": "pips", "cancel": "descending"},
            [("roll", [2] * 2 + [1] * 11), ("keep", 2), ("roll", [1] + [5] * 10), ("keep", 5)],
            [2, 2] + [5] * 10,
            [1],
            "over",
            2 + 2 + 45,  # a 5 cancels the bad 1
        ),
    ],
)
def test_turns(rules, steps, good, bad, state, score):
    turn = play(rules, steps)
    assert sorted(turn.good) == sorted(good) and sorted(turn.bad) == sorted(bad)
    assert turn.state == state and turn.score == score


def test_a_set_must_be_kept_before_rolling_again_or_ending():
    """ "Out of the remaining dice, keep another set": a re-roll with good dice needs a keep."""
    turn = play({}, [("roll", [3] * 3 + [1] * 10), ("keep", 3), ("roll", [1, 2, 3] + [6] * 7)])
    with pytest.raises(ValueError, match="cannot roll now: the turn is awaiting_keep"):
        turn.roll([1, 2])
    with pytest.raises(ValueError, match="a set must be kept before the turn can end"):
        turn.end()
    with pytest.raises(ValueError, match="no good 3 to keep"):
        turn.keep(3)  # the 3 went bad (L1), only the 6s are good
    turn.keep(6)
    assert turn.dice_left == 0 and turn.state == "over" and turn.end() == 10 - 3
    with pytest.raises(ValueError, match="cannot roll now: the turn is over"):
        turn.roll([1])


@pytest.mark.parametrize(
    ("rules", "turns", "winner", "scores"),
    [
        # "The first player to earn 30 points wins": past 30 wins too, in the middle of a round
        ({}, [13, -11, 13, 13, 5], "ann", {"ann": 31, "bob": 2}),
        ({}, [-11, 13, -11, 13, 13, 4], "bob", {"ann": -9, "bob": 30}),
        ({"scoring": "pips", "target": 100}, [78, 0, 22], "ann", {"ann": 100, "bob": 0}),
    ],
)
def test_games_to_the_target(rules, turns, winner, scores):
    g = LowHighGame(get_game("low-high", **rules), ["ann", "bob"])
    for points in turns:
        assert g.winner is None
        g.record(points)
    assert g.winner == winner and g.scores == scores and g.current_player is None


# --- Low-High: inputs that are not a move ---------------------------------------------------------
@pytest.mark.parametrize("highest", ["2", True, 2.5, None, 7, -1])
def test_highest_kept_must_be_a_face(highest):
    """'2' raised a bare TypeError; True was taken as 1, 2.5 split the dice at 2.5. L1: the
    highest face kept so far is a face, or 0 before any keep: 7 and -1 are neither."""
    with pytest.raises(
        ValueError, match=f"highest kept face must be 0 \\(none yet\\) to 6, got {highest!r}"
    ):
        get_game("low-high").options([1, 3], highest)


@pytest.mark.parametrize("face", [True, 6.0, "6"])
def test_a_keep_names_a_face(face):
    """keep(True) kept the 1s and keep(6.0) the 6s."""
    turn = play({}, [("roll", [1] * 12 + [6])])
    with pytest.raises(ValueError, match=f"no good {face!r} to keep"):
        turn.keep(face)
    assert turn.good == [] and turn.state == "awaiting_keep"


def test_a_turn_has_thirteen_dice():
    """turn_score([1] * 13, [1]) scored 12: fourteen dice."""
    with pytest.raises(ValueError, match="a turn has 13 dice, got 13 good and 1 bad"):
        get_game("low-high").turn_score([1] * 13, [1])


@pytest.mark.parametrize(
    ("rules", "points"),
    [
        ({}, 2.7),
        ({}, True),
        ({}, "x"),
        ({}, 14),
        ({}, -12),
        ({"scoring": "pips"}, 79),
        ({"scoring": "pips"}, -67),
    ],
)
def test_a_recorded_turn_is_a_score_a_turn_can_make(rules, points):
    """2.7 was recorded as 2, True as 1, 'x' said "invalid literal for int()", and 14 (more
    than thirteen dice make) was recorded; nothing is recorded and the turn stays."""
    g = LowHighGame(get_game("low-high", **rules), ["ann", "bob"])
    with pytest.raises(
        ValueError, match=f"expected a turn score, a whole number .* got {points!r}"
    ):
        g.record(points)
    assert g.scores == {"ann": 0, "bob": 0} and g.current_player == "ann"


def test_low_high_players_given_as_one_string_are_refused():
    with pytest.raises(ValueError, match="a list of 2 to 6 distinct players, got 'abc'"):
        LowHighGame(get_game("low-high"), "abc")
