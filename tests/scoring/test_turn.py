"""Turn and game state machines: forced re-rolls, roll-over, F2, F3, entry, final round."""

import pytest

from scoring import FarkleGame, FarkleTurn, ScoringError, get_game


def mr_turn():
    return FarkleTurn(get_game("morning-roll"))


def test_heathers_turn_from_the_text():
    turn = mr_turn()
    turn.roll([1, 2, 2, 3, 5, 6])
    assert turn.state == "awaiting_keep"
    assert turn.keep([1]).points == 100
    assert turn.dice_left == 5
    turn.roll([1, 4, 4, 4, 6])
    turn.keep([1, 4, 4, 4])
    assert turn.turn_points == 600
    assert turn.bank() == 600
    assert turn.state == "banked" and turn.score == 600
    assert [r["dice"] for r in turn.rolls] == [[1, 2, 2, 3, 5, 6], [1, 4, 4, 4, 6]]


def test_bust_on_a_later_roll_loses_the_turn():
    turn = mr_turn()
    turn.roll([1, 2, 2, 3, 5, 6])
    turn.keep([1, 5])
    turn.roll([2, 2, 3, 4])
    assert turn.state == "bust"
    assert turn.turn_points == 0 and turn.score == 0
    with pytest.raises(ScoringError, match="cannot roll now: the turn is bust"):
        turn.roll([1])


def test_die_off_the_table_busts():  # M8
    turn = mr_turn()
    turn.roll([1, 1, 1, 5, 5], off_table=1)
    assert turn.state == "bust"
    assert turn.rolls[-1]["off_table"] == 1


def test_forced_reroll_after_straight_and_bust_loses_the_2500():  # M5
    turn = mr_turn()
    turn.roll([1, 2, 3, 4, 5, 6])
    keep = turn.keep([1, 2, 3, 4, 5, 6])
    assert keep.forced_reroll and turn.must_roll
    assert turn.dice_left == 6
    with pytest.raises(ScoringError, match="2500 combo forces a re-roll"):
        turn.bank()
    turn.roll([2, 2, 3, 4, 6, 6])
    assert turn.state == "bust" and turn.turn_points == 0


def test_straight_may_be_kept_as_its_1_and_stopped():
    turn = mr_turn()
    turn.roll([1, 2, 3, 4, 5, 6])
    turn.keep([1])
    assert not turn.must_roll
    assert turn.bank() == 100


def test_roll_over_is_optional():  # M7
    turn = mr_turn()
    turn.roll([1, 1, 1, 5, 5, 5])
    turn.keep([1, 1, 1, 5, 5, 5])
    assert turn.hot_dice and turn.dice_left == 6 and not turn.must_roll
    assert turn.bank() == 1500
    assert not turn.skips_next_turn  # Morning Roll has no skip rule


def test_illegal_moves_name_the_problem():
    turn = mr_turn()
    with pytest.raises(ScoringError, match="cannot keep now"):
        turn.keep([1])
    with pytest.raises(ScoringError, match="cannot bank now"):
        turn.bank()
    with pytest.raises(ScoringError, match="expected a roll of 6 dice, got 5"):
        turn.roll([1, 2, 3, 4, 5])
    with pytest.raises(ScoringError, match="got 7"):
        turn.roll([1, 2, 3, 4, 5, 7])
    turn.roll([1, 2, 2, 3, 5, 6])
    with pytest.raises(ScoringError, match=r"cannot keep \[1, 1\]: the roll was"):
        turn.keep([1, 1])
    with pytest.raises(ScoringError, match=r"\[2, 2\] is not a legal keep"):
        turn.keep([2, 2])
    with pytest.raises(ScoringError, match="cannot roll now"):
        turn.roll([1, 2, 3, 4, 5])
    assert isinstance(ScoringError("x"), ValueError)


def test_farkle_five_cannot_bank_on_50_and_skips_after_hot_pass():  # F2, F3
    turn = FarkleTurn(get_game("farkle-five"))
    turn.roll([2, 2, 2, 5, 1])
    turn.keep([1, 2, 2, 2, 5])
    assert turn.turn_points == 350 and turn.must_roll and turn.hot_dice
    with pytest.raises(ScoringError, match="ending in 50"):
        turn.bank()
    turn.roll([4, 1, 5, 5, 5])
    assert turn.state == "awaiting_keep"
    with pytest.raises(ScoringError, match="not a legal keep"):
        turn.keep([1])  # F1: every scoring die is kept
    with pytest.raises(ScoringError):
        turn.keep([1, 4, 5, 5, 5])  # the 4 does not score
    turn.keep([1, 5, 5, 5])
    assert turn.turn_points == 950 and turn.must_roll  # ends in 50 again
    turn.roll([1])
    turn.keep([1])
    assert turn.hot_dice and turn.turn_points == 1050 and turn.must_roll
    turn.roll([1, 2, 3, 4, 5])
    turn.keep([1, 2, 3, 4, 5])  # Big Roll on five dice
    assert turn.turn_points == 1550 and turn.must_roll and turn.hot_dice
    turn.roll([5, 2, 3, 4, 6])
    turn.keep([5])
    assert turn.turn_points == 1600 and not turn.must_roll and not turn.hot_dice
    assert turn.bank() == 1600 and not turn.skips_next_turn


def test_pass_on_hot_dice_skips_next_turn_and_game_skips_it():
    turn = FarkleTurn(get_game("farkle-five"))
    turn.roll([1, 1, 1, 1, 5])
    turn.keep([1, 1, 1, 1, 5])
    assert turn.must_roll  # 2050 ends in 50
    turn.roll([1, 1, 5, 5, 1])
    turn.keep([1, 1, 1, 5, 5])  # 1100 -> 3150, still hot and ends in 50
    turn.roll([3, 3, 3, 1, 5])
    turn.keep([1, 3, 3, 3, 5])  # 450 -> 3600
    assert turn.hot_dice and not turn.must_roll
    assert turn.bank() == 3600
    game = FarkleGame(get_game("farkle-five"), ["ann", "bob"])
    assert game.finish(turn) == 3600
    assert turn.skips_next_turn
    assert game.current_player == "bob"
    game.record(0)
    assert game.current_player == "bob"  # ann's turn is skipped
    assert {"player": "ann", "skipped": True} in game.history


def test_five_ones_win_at_once():  # F4
    game = FarkleGame(get_game("farkle-five"), ["ann", "bob"])
    turn = game.new_turn()
    turn.roll([1, 1, 1, 1, 1])
    turn.keep([1, 1, 1, 1, 1])
    assert turn.state == "banked" and turn.wins_game
    game.finish(turn)
    assert game.finished and game.winner == "ann"
    with pytest.raises(ScoringError, match="game is over"):
        game.record(100)


@pytest.mark.parametrize(("game", "entry"), [("farkle-five", 500), ("greed", 300)])
def test_entry_threshold_exactly_counts(game, entry):  # F7, G3
    g = FarkleGame(get_game(game), ["ann", "bob"])
    assert g.record(entry - 100) == 0  # ann: not on the board, banks nothing
    assert g.record(entry) == entry  # bob: exactly the entry counts
    assert g.record(100) == 0  # ann still needs a single turn of `entry`
    assert g.record(100) == 100  # bob is on the board: small turns count
    assert g.scores == {"ann": 0, "bob": entry + 100}
    assert g.on_board == {"ann": False, "bob": True}


def test_final_round_and_winner():  # F8 / Greed end game
    g = FarkleGame(get_game("greed"), ["ann", "bob", "cy"])
    g.record(2000)  # ann
    g.record(300)  # bob
    g.record(0)  # cy
    g.record(1000)  # ann reaches 3000: final round
    assert g.final_round_by == "ann" and not g.finished
    g.record(2000)  # bob's last turn: 2300
    assert not g.finished
    g.record(3500)  # cy's last turn: 3500
    assert g.finished and g.winner == "cy" and g.winners == ["cy"]
    assert g.current_player is None


def test_a_turn_skipped_in_the_final_round_is_that_players_last():  # F3 with F8
    """ann passed on hot dice (F3), then bob reaches 5000: ann's skipped turn was her last,
    so the game ends there; it does not pass back to bob for another turn."""
    g = FarkleGame(get_game("farkle-five"), ["ann", "bob"])
    g.record(600, skips_next_turn=True)  # ann
    g.record(5000)  # bob reaches the target: final round
    assert g.history[-1] == {"player": "ann", "skipped": True}
    assert g.finished and g.winner == "bob" and g.current_player is None
    with pytest.raises(ScoringError, match="game is over"):
        g.record(100)


def test_final_round_tie_has_no_single_winner():
    g = FarkleGame(get_game("greed"), ["ann", "bob"])
    g.record(3000)
    g.record(3000)
    assert g.finished and g.winners == ["ann", "bob"] and g.winner is None


def test_morning_roll_game_has_no_entry_or_end():
    g = FarkleGame(get_game("morning-roll"), ["heather", "mike"])
    assert g.record(50) == 50
    for _ in range(30):
        g.record(5000)
    assert not g.finished


def test_game_input_errors():
    with pytest.raises(ValueError, match="at least one player"):
        FarkleGame(get_game("greed"), [])
    with pytest.raises(ValueError, match="distinct"):
        FarkleGame(get_game("greed"), ["a", "a"])
    g = FarkleGame(get_game("greed"), ["a"])
    with pytest.raises(ScoringError, match="multiple of 50, got 75"):
        g.record(75)
    turn = g.new_turn()
    with pytest.raises(ScoringError, match="not over"):
        g.finish(turn)


def test_to_dict_round_trip_fields():
    turn = mr_turn()
    turn.roll([1, 2, 2, 3, 5, 6])
    d = turn.to_dict()
    assert d["state"] == "awaiting_keep" and d["dice_left"] == 6
    assert {"dice": [1], "points": 100, "forced_reroll": False, "wins_game": False} in d["keeps"]


@pytest.mark.parametrize("off_table", ["1", 1.5, True, None, -1])
def test_off_table_that_is_not_a_count_of_dice_is_refused(off_table):
    """'1' and None raised a bare TypeError, 1.5 was counted as dice; the turn is unchanged."""
    turn = mr_turn()
    with pytest.raises(ScoringError, match=r"off_table must be a whole number of dice >= 0, got"):
        turn.roll([1, 2, 3, 4, 5], off_table=off_table)
    assert turn.state == "awaiting_roll" and turn.rolls == []


@pytest.mark.parametrize("dice", [None, 5])
def test_roll_or_keep_of_no_sequence_is_refused(dice):
    turn = mr_turn()
    with pytest.raises(ScoringError, match=f"expected a sequence of die faces, got {dice}"):
        turn.roll(dice)
    turn.roll([1, 2, 3, 4, 5, 6])
    with pytest.raises(ScoringError, match=f"expected a sequence of die faces, got {dice}"):
        turn.keep(dice)
    assert turn.state == "awaiting_keep" and turn.turn_points == 0


def test_forced_reroll_choice_that_does_not_fit_the_keep_says_why():
    turn = mr_turn()
    turn.roll([1, 2, 3, 4, 5, 6])
    # the message listed [1] among the legal keeps while refusing it
    with pytest.raises(ScoringError, match=r"\[1\] is no 2500 combo: keep it with forced_reroll"):
        turn.keep([1], forced_reroll=True)
    with pytest.raises(ScoringError, match=r"\[1, 2, 3, 4, 5, 6\] scores only as a 2500 combo"):
        turn.keep([1, 2, 3, 4, 5, 6], forced_reroll=False)
    with pytest.raises(ScoringError, match="forced_reroll must be true, false or None, got 'yes'"):
        turn.keep([1], forced_reroll="yes")  # was read as 'no such keep'
    assert turn.state == "awaiting_keep" and turn.turn_points == 0
    assert turn.keep([1, 2, 3, 4, 5, 6], forced_reroll=True).points == 2500


@pytest.mark.parametrize(
    ("players", "message"),
    [
        ("ab", "expected a list of player names, got the string 'ab'"),  # was players a and b
        (["ann", 3], "a player name must be a non-empty string, got 3"),
        (["ann", " "], "a player name must be a non-empty string, got ' '"),
    ],
)
def test_players_that_are_not_names_are_refused(players, message):
    with pytest.raises(ValueError, match=message):
        FarkleGame(get_game("greed"), players)


@pytest.mark.parametrize("game", ["greed", "morning-roll"])
def test_only_five_dice_farkle_has_a_keep_that_wins_at_once(game):  # F4
    """A turn recorded as won ended a Greed or Morning Roll game with an instant winner."""
    g = FarkleGame(get_game(game), ["ann", "bob"])
    with pytest.raises(ScoringError, match=f"{game} has no keep that wins the game at once"):
        g.record(5000, wins_game=True)
    assert not g.finished and g.scores == {"ann": 0, "bob": 0} and g.current_player == "ann"


@pytest.mark.parametrize("game", ["greed", "morning-roll"])
def test_only_five_dice_farkle_skips_a_turn_after_a_pass(game):  # F3
    """A Greed or Morning Roll turn recorded with skips_next_turn skipped the player's next."""
    g = FarkleGame(get_game(game), ["ann", "bob"])
    with pytest.raises(ScoringError, match=f"{game} skips no turn after a pass"):
        g.record(300, skips_next_turn=True)
    assert g.scores == {"ann": 0, "bob": 0} and g.current_player == "ann"


def test_a_turn_of_another_game_is_refused():
    """A five-dice Farkle turn credited to a Greed game carried its F3 skip into Greed."""
    g = FarkleGame(get_game("greed"), ["ann", "bob"])
    turn = FarkleTurn(get_game("farkle-five"))
    turn.roll([2, 2, 2, 1, 1])
    turn.keep([1, 1, 2, 2, 2])
    turn.bank()
    with pytest.raises(ScoringError, match=r"expected a turn of Greed\(\), got one of FarkleFive"):
        g.finish(turn)
    assert g.history == [] and g.current_player == "ann"
