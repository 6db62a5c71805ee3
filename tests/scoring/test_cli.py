"""``dicecam score/advise/strategy`` end to end, including the one-line errors."""

import json
import subprocess
import sys

import pytest

from service.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_score_json_from_the_issue(capsys):
    code, out, _ = run(
        capsys, "score", "--game", "morning-roll", "--json", "1", "1", "1", "5", "2", "3"
    )
    data = json.loads(out)
    assert code == 0 and data["bust"] is False and data["max_points"] == 1050
    assert {"dice": [1, 1, 1, 5], "points": 1050, "forced_reroll": False} in [
        {k: v for k, v in keep.items() if k != "wins_game"} for keep in data["keeps"]
    ]


def test_score_bust_and_table(capsys):
    code, out, _ = run(capsys, "score", "--json", "2", "2", "3", "4", "6")
    assert json.loads(out)["bust"] is True and json.loads(out)["keeps"] == []
    code, out, _ = run(capsys, "score", "--game", "greed", "1", "1", "1", "3", "1")
    assert code == 0 and "1100" in out and "keep" in out


def test_score_other_games(capsys):
    _, out, _ = run(capsys, "score", "--game", "solitaire-dice", "--json", "4", "4", "6", "1", "4")
    assert len(json.loads(out)["splits"]) == 4
    _, out, _ = run(
        capsys, "score", "--game", "solitaire-dice", "--rejects", "1,5,6", "--json", "2,2,3,4,4"
    )
    assert all(s["free_ride"] for s in json.loads(out)["splits"])
    _, out, _ = run(
        capsys,
        "score",
        "--game",
        "low-high",
        "--highest-kept",
        "2",
        "--json",
        "1",
        "1",
        "2",
        "4",
        "4",
        "6",
    )
    data = json.loads(out)
    assert data["bad"] == [1, 1, 2] and [s["face"] for s in data["sets"]] == [4, 6]


def test_advise_json_from_the_issue(capsys):
    code, out, _ = run(
        capsys, "advise", "--game", "morning-roll", "--banked", "200", "--json", "5", "1", "2"
    )
    options = json.loads(out)["options"]
    assert code == 0 and options[0]["keep"] == [1, 5] and options[0]["then"] == "bank"
    assert options[0]["expected"] == 350.0
    assert [o["expected"] for o in options] == sorted(
        (o["expected"] for o in options), reverse=True
    )
    assert {o["then"] for o in options} == {"bank", "roll"}
    code, out, _ = run(capsys, "advise", "--banked", "200", "5", "1", "2")
    assert "expected" in out and "bank" in out


def test_strategy_json(capsys):
    code, out, _ = run(capsys, "strategy", "--game", "morning-roll", "--json")
    data = json.loads(out)
    assert code == 0 and isinstance(data["expected_turn_score"], float)
    assert set(data["bank_thresholds"]) == {"1", "2", "3", "4", "5", "6"}
    code, out, _ = run(capsys, "strategy", "--game", "greed", "--rule", "x=1")
    assert code == 2


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["score", "1", "7"], "got 7"),
        (["score", "--game", "morning-roll"] + ["1"] * 8, "at most 6 dice, got 8"),
        (["score", "1", "x"], "got 'x'"),
        (["score", "--game", "yahtzee", "1"], "expected one of: morning-roll"),
        (["score", "--game", "farkle", "1"], "did you mean 'farkle-five'?"),
        (["advise", "--banked", "25", "1"], "multiple of 50, got 25"),
        (["advise", "--banked", "lots", "1"], "--banked must be an integer"),
        (["advise", "--game", "low-high", "1"], "no strategy advisor"),
        (
            ["advise", "--game", "farkle", "1"],
            "unknown game 'farkle' (did you mean 'farkle-five'?)",
        ),
        (["strategy", "--game", "yahtzee"], "unknown game 'yahtzee'; expected one of: morning"),
        (["score", "--game", "solitaire-dice", "1", "2"], "expected 5 dice, got 2"),
        (
            ["score", "--game", "solitaire-dice", "--rejects", "1,9", "1", "2", "3", "4", "5"],
            "a reject face must be 1 to 6, got 9",
        ),
        (
            ["score", "--game", "solitaire-dice", "--rejects", "0", "1", "2", "3", "4", "5"],
            "a reject face must be 1 to 6, got 0",
        ),
        (
            ["score", "--game", "solitaire-dice", "--rejects", "1,2,3,4", "1", "2", "3", "4", "5"],
            "4 would be a fourth (S3)",
        ),
        (["score"], "no dice given"),
        (["score", "--rule", "three_pairs_any", "1"], "KEY=VALUE"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err


def test_real_process_letters_exit_2():
    proc = subprocess.run(
        [sys.executable, "-m", "service.cli", "score", "--game", "greed", "a", "b"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert (
        proc.stderr.strip() == "dicecam score: error: a die face must be a number 1 to 6, got 'a'"
    )


def test_advise_table_says_why_an_expected_value_is_not_the_points(capsys):
    # without notes a hot-dice bank read 'bank 300 ... 355.88' from 300 kept, with no reason
    _, out, _ = run(capsys, "advise", "--game", "farkle-five", "--banked", "300", "2,2,2,5,5")
    assert "bank     300     355.88  skips your next turn (worth 244.12)" in out
    _, out, _ = run(capsys, "advise", "1", "2", "3", "4", "5", "6")
    assert "2500    2943.10  forced re-roll" in out
    _, out, _ = run(capsys, "advise", "--game", "farkle-five", "1", "1", "1", "1", "1")
    assert "5000    5000.00  wins the game" in out
    _, out, _ = run(capsys, "advise", "--game", "greed", "--not-on-board", "1", "2", "3", "4", "6")
    assert "0.00  below the entry score 300: banks nothing" in out
    _, out, _ = run(capsys, "advise", "--banked", "200", "5", "1", "2")
    assert "bank     150     350.00\n" in out  # a plain bank: no note


def test_advise_notes_only_the_banks_they_are_about(capsys):
    # entry score: what was banked earlier counts (200 + 100 makes greed's 300)
    _, out, _ = run(capsys, "advise", "--game", "greed", "--not-on-board", "--banked", "200", "1")
    assert "bank     100     300.00\n" in out
    # a roll banks nothing yet: no entry-score note on it
    _, out, _ = run(capsys, "advise", "--game", "greed", "--not-on-board", "1", "2", "3", "4", "6")
    assert " 1  1              roll     100     237.41\n" in out
    # farkle-five skips a turn after a pass of hot dice only, not after a bank leaving dice
    _, out, _ = run(capsys, "advise", "--game", "farkle-five", "--banked", "1000", "1 2 3 4 6")
    assert " 1  1              bank     100    1100.00\n" in out


def test_advise_json_gives_the_dice_sorted(capsys):
    code, out, _ = run(capsys, "advise", "--json", "5", "3", "1")
    assert code == 0 and json.loads(out)["dice"] == [1, 3, 5]


def test_advise_for_a_game_without_an_advisor_names_those_with_one(capsys):
    code, out, err = run(capsys, "advise", "--game", "solitaire-dice", "1", "2", "3", "4", "5")
    assert code == 2 and out == ""
    assert err == (
        "dicecam advise: error: no strategy advisor for 'solitaire-dice'; "
        "advisors exist for: morning-roll, farkle-five, greed\n"
    )


def test_blank_rejects_are_no_rejects(capsys):
    code, out, _ = run(
        capsys, "score", "--game", "solitaire-dice", "--json", "--rejects", " ", "1 2 3 4 5"
    )
    assert code == 0 and json.loads(out) == json.loads(
        run(capsys, "score", "--game", "solitaire-dice", "--json", "1 2 3 4 5")[1]
    )


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_advise_of_a_bust_is_an_answer_not_an_error(capsys, json_flag):
    code, out, err = run(capsys, "advise", *json_flag, "2", "2", "3", "4", "6")
    assert code == 0 and err == ""
    assert ("BUST: the turn scores 0" in out) if not json_flag else json.loads(out)["bust"]


def test_a_malformed_rule_is_said_as_the_rule_options_mistake(capsys):
    code, _, err = run(capsys, "score", "--rule", "three_pairs_any", "1")
    assert code == 2 and err == (
        "dicecam score: error: --rule: expected a house rule as KEY=VALUE, got 'three_pairs_any'\n"
    )


def test_strategy_table_has_a_row_for_every_number_of_dice(capsys):
    code, out, _ = run(capsys, "strategy", "--game", "greed")
    rows = [line.split() for line in out.splitlines()[3:]]
    assert code == 0 and [row[:2] for row in rows] == [
        ["1", "200"],
        ["2", "200"],
        ["3", "350"],
        ["4", "950"],
        ["5", "2800"],
    ]
