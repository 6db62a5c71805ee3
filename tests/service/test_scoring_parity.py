"""One roll, one answer: the scoring package (the reference), ``dicecam score/advise/strategy
--json`` and ``POST /api/v1/score`` agree on every field they share, for the five games under
each of their house rules, and refuse the same bad input alike (a turn of ``/api/v1/turns``:
test_turn_parity.py).

The CLI's bulk runs in process (its parser built once, stdout captured), a few commands in real
subprocesses; the HTTP side is one real server for the whole module.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from scoring import SolitaireSheet, get_advisor, get_game
from service.cli import build_parser, main

from dicecam_testing.parity import (
    FARKLE,
    FARKLE_RULES,
    GAME_RULES,
    TOL,
    assert_keeps_ranked,
    assert_same_options,
    every_roll,
    http_score,
    rule_args,
    scoring_api,
)


@pytest.fixture(scope="module")
def api() -> Iterator[httpx.Client]:
    with scoring_api() as client:
        yield client


@pytest.fixture(scope="module")
def cli():
    """``cli(*argv) -> (status, stdout, stderr)`` through the ``dicecam`` parser and commands,
    in process; JSON output is parsed."""
    parser = build_parser()

    def run(*argv: str) -> tuple[int, Any, str]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            if argv[0] in ("score", "advise", "strategy") and "--json" in argv:
                args = parser.parse_args(list(argv))
                status = args.func(args)
            else:  # the whole entry point, errors included
                status = main(list(argv))
        text = out.getvalue()
        return status, json.loads(text) if "--json" in argv and text else text, err.getvalue()

    return run


# --- the Farkle family: every roll ------------------------------------------------------------
@pytest.mark.parametrize(("game", "rules"), FARKLE_RULES, ids=lambda v: str(v))
def test_every_farkle_roll_scores_and_advises_alike(api, cli, game, rules):
    rules_obj = get_game(game, **rules)
    advisor = get_advisor(game, **rules)
    rolls = every_roll(rules_obj.n_dice)
    flags = [a for r in rule_args(rules) for a in ("--rule", r)]
    for roll in rolls:
        where = (game, rules, roll)
        reference = rules_obj.score(roll)
        options = advisor.advise(roll, 0)
        argv = [str(v) for v in roll]
        _, scored, _ = cli("score", "--game", game, "--json", *flags, *argv)
        assert scored == json.loads(json.dumps(reference)), where
        _, advised, _ = cli("advise", "--game", game, "--json", *flags, *argv)
        assert advised["bust"] == reference["bust"] == (not options), where
        assert advised["dice"] == reference["dice"] and advised["banked"] == 0, where
        assert_same_options(advised["options"], options, where)
        answer = http_score(api, game, roll, rules)
        assert answer["bust"] == reference["bust"], where
        assert_same_options(answer["advice"], options, where)
        assert_keeps_ranked(answer["keeps"], rules_obj, roll, options, where)


BANKED = (50, 300, 350, 450, 1000, 3050, 20000)


@pytest.mark.parametrize(("game", "rules"), FARKLE_RULES, ids=lambda v: str(v))
def test_banked_and_not_on_board_advise_alike(api, cli, game, rules):
    """Points kept earlier in the turn, and a player below the entry score (F7, G3)."""
    rules_obj = get_game(game, **rules)
    rolls = every_roll(rules_obj.n_dice)
    flags = [a for r in rule_args(rules) for a in ("--rule", r)]
    rng = random.Random(f"{game}{rules}")
    for on_board in (True, False):
        advisor = get_advisor(game, on_board=on_board, **rules)
        for roll in rng.sample(rolls, 60):
            banked = rng.choice(BANKED)
            where = (game, rules, roll, banked, on_board)
            options = advisor.advise(roll, banked)
            extra = [] if on_board else ["--not-on-board"]
            argv = [str(v) for v in roll]
            _, advised, _ = cli(
                "advise", "--game", game, "--json", "--banked", str(banked), *extra, *flags, *argv
            )
            assert advised["banked"] == banked, where
            assert_same_options(advised["options"], options, where)
            answer = http_score(
                api, game, roll, rules, banked=banked, on_board=str(on_board).lower()
            )
            assert answer["bust"] == (not options), where
            assert_same_options(answer["advice"], options, where)
            assert_keeps_ranked(answer["keeps"], rules_obj, roll, options, where)


@pytest.mark.parametrize(("game", "rules"), FARKLE_RULES, ids=lambda v: str(v))
def test_strategy_json_is_the_advisors(cli, game, rules):
    flags = [a for r in rule_args(rules) for a in ("--rule", r)]
    for on_board in (True, False):
        advisor = get_advisor(game, on_board=on_board, **rules)
        extra = [] if on_board else ["--not-on-board"]
        _, shown, _ = cli("strategy", "--game", game, "--json", *extra, *flags)
        ref = json.loads(json.dumps(advisor.to_dict()))
        assert shown["expected_turn_score"] == pytest.approx(advisor.expected_turn_score, abs=TOL)
        assert shown["skip_penalty"] == pytest.approx(advisor.skip_penalty, abs=TOL)
        assert {k: v for k, v in shown.items() if k not in ("expected_turn_score",)} == {
            k: v for k, v in ref.items() if k not in ("expected_turn_score",)
        }
        assert shown["on_board"] is on_board and shown["house_rules"] == {**rules}


# --- Solitaire Dice and Low-High ----------------------------------------------------------------
SHEETS = ("", "1", "1,1,5,6", "2,2,2,2,2,2,2", "3,4,4,5,5,5")
"""Faces rejected so far: none, one, three faces, a seventh reject, three faces again."""


def test_solitaire_splits_alike_for_each_sheet(api, cli):
    game = get_game("solitaire-dice")
    for rejects in SHEETS:
        for roll in every_roll(5)[-252:]:  # the 5-dice rolls
            where = (roll, rejects)
            sheet = SolitaireSheet()
            for face in (int(f) for f in rejects.split(",") if f):
                sheet.add_reject(face)
            reference = json.loads(json.dumps(game.score(roll, sheet)))
            argv = [str(v) for v in roll]
            _, shown, _ = cli(
                "score", "--game", "solitaire-dice", "--rejects", rejects, "--json", *argv
            )
            assert shown == reference, where
            if sum(roll) % 3:
                continue  # HTTP: a third of the rolls
            answer = http_score(api, "solitaire-dice", roll, {}, rejects=rejects)
            assert answer["options"] == reference["splits"], where
            assert answer["score"]["splits"] == reference["splits"], where


@pytest.mark.parametrize(("game", "rules"), [(g, r) for g, r in GAME_RULES if g == "low-high"])
def test_low_high_sets_alike(api, cli, game, rules):
    rules_obj = get_game(game, **rules)
    flags = [a for r in rule_args(rules) for a in ("--rule", r)]
    rng = random.Random(str(rules))
    for _ in range(80):
        roll = sorted(rng.randint(1, 6) for _ in range(rng.randint(1, 13)))
        highest = rng.randint(0, 6)
        where = (rules, roll, highest)
        reference = json.loads(json.dumps(rules_obj.score(roll, highest)))
        argv = [str(v) for v in roll]
        _, shown, _ = cli(
            "score", "--game", game, "--highest-kept", str(highest), "--json", *flags, *argv
        )
        assert shown == reference, where
        answer = http_score(api, game, roll, rules, highest_kept=highest)
        assert answer["score"] == reference and answer["options"] == reference["sets"], where
        assert answer["bust"] == reference["turn_over"], where


# --- the same refusal everywhere -------------------------------------------------------------
BAD_INPUT = [
    # (game, values, --rule items, banked, phrases every refusal says)
    ("morning-roll", [1, 2, 7], [], 0, ["1 to 6", "7"]),
    ("greed", [1, 0, 5], [], 0, ["1 to 6", "0"]),
    ("morning-roll", [1] * 7, [], 0, ["at most 6", "7"]),
    ("farkle-five", [5] * 6, [], 0, ["at most 5", "6"]),
    ("solitaire-dice", [1, 2, 3, 4, 5, 6], [], 0, ["5 dice", "6"]),
    ("low-high", [2] * 14, [], 0, ["at most 13", "14"]),
    ("morning-roll", [1, 5], ["bogus=true"], 0, ["bogus", "three_pairs_any"]),
    ("greed", [1, 5], ["on_board=false"], 0, ["on_board", "valid: none"]),
    ("morning-roll", [1, 5], ["three_pairs_any=1"], 0, ["three_pairs_any", "true or false"]),
    ("farkle-five", [1, 5], ["free_keep=maybe"], 0, ["free_keep", "'maybe'"]),
    ("low-high", [1, 5], ["target=abc"], 0, ["target", "'abc'"]),
    ("low-high", [1, 5], ["scoring=7"], 0, ["scoring", "'pips'", "7"]),
    ("morning-roll", [1, 5], [], -50, ["-50"]),
    ("greed", [1, 5], [], 30, ["multiple of 50", "30"]),
]


@pytest.mark.parametrize(("game", "values", "rules", "banked", "phrases"), BAD_INPUT)
def test_bad_input_is_refused_alike(api, cli, game, values, rules, banked, phrases):
    from scoring import parse_house_rules

    with pytest.raises(ValueError) as python:
        house = parse_house_rules(rules)
        game_rules = get_game(game, **house)
        if game in FARKLE:
            get_advisor(game, **house).advise(values, banked)
        else:
            game_rules.score(values)
    said = {"python": str(python.value)}
    flags = [a for r in rules for a in ("--rule", r)]
    commands = ["score", "advise"] if game in FARKLE else ["score"]
    for command in commands if banked == 0 else ["advise"]:
        extra = ["--banked", str(banked)] if command == "advise" else []
        status, out, err = cli(command, "--game", game, *extra, *flags, *map(str, values))
        assert status == 2 and out == "" and err.count("\n") == 1, (command, err)
        said[command] = err
    r = api.post(
        "/score",
        params={"game": game, "rule": rules, "banked": banked},
        json={"values": values},
    )
    assert r.status_code == 422, r.text
    said["http"] = r.json()["detail"]
    if game in FARKLE:  # a turn: refused as it starts, or its roll refused and nothing lost
        start = api.post("/turns", json={"player": "ann", "game": game, "rules": house})
        if rules:
            assert start.status_code == 422, start.text
            said["turn"] = start.json()["detail"]
        elif banked == 0:
            turn = start.json()
            rolled = api.post(f"/turns/{turn['id']}/rolls", json={"values": values})
            assert rolled.status_code == 422 and phrases[-1] in rolled.json()["detail"]
            again = api.get(f"/turns/{turn['id']}").json()
            assert again["rolls"] == 0 and again["awaiting"] == "roll"
    for where, message in said.items():
        assert all(p in message for p in phrases), (where, message, phrases)


def test_real_dicecam_processes_answer_as_the_package():
    """``dicecam score/advise/strategy --json`` as a player runs them (a few: the rest of the
    comparison runs the same commands in process)."""
    import subprocess
    import sys

    def dicecam(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "service.cli", *argv], capture_output=True, text=True, timeout=60
        )

    done = dicecam(
        "score",
        "--game",
        "morning-roll",
        "--json",
        "--rule",
        "three_pairs_any=true",
        "2",
        "2",
        "2",
        "2",
        "3",
        "3",
    )
    assert json.loads(done.stdout) == get_game("morning-roll", three_pairs_any=True).score(
        [2, 2, 2, 2, 3, 3]
    )
    done = dicecam(
        "advise",
        "--game",
        "farkle-five",
        "--json",
        "--banked",
        "300",
        "--not-on-board",
        "1",
        "3",
        "4",
    )
    options = get_advisor("farkle-five", on_board=False).advise([1, 3, 4], 300)
    assert_same_options(json.loads(done.stdout)["options"], options, "advise")
    done = dicecam("strategy", "--game", "greed", "--json")
    shown = json.loads(done.stdout)
    assert shown["expected_turn_score"] == pytest.approx(
        get_advisor("greed").expected_turn_score, abs=TOL
    )
    done = dicecam("advise", "--game", "greed", "--rule", "on_board=false", "1", "5")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "dicecam advise: error: greed: unknown house rule(s) on_board; valid: none"
    ]


def test_a_die_face_written_in_other_digits_is_refused_in_one_line(cli):
    """'²' is a digit to Python's str.isdigit, not a number to int(): it was a traceback."""
    for command in ("score", "advise"):
        status, out, err = cli(command, "1", "²", "5")
        assert (status, out) == (2, "")
        assert err == f"dicecam {command}: error: a die face must be a number 1 to 6, got '²'\n"
