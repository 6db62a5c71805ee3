"""One roll, one answer: the scoring package (the reference), ``dicecam score/advise/strategy
--json``, ``POST /api/v1/score`` and a turn of ``/api/v1/turns`` agree on every field they
share, for the five games under each of their house rules, and refuse the same bad input alike.

The CLI's bulk runs in process (its parser built once, stdout captured), a few commands in real
subprocesses; the HTTP side is one real server (LiveServer) for the whole module.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import tempfile
from collections.abc import Iterator
from itertools import product
from typing import Any

import httpx
import pytest

from scoring import (
    HOUSE_RULE_CHOICES,
    HOUSE_RULES,
    SolitaireSheet,
    get_advisor,
    get_game,
)
from scoring.dice import distinct_rolls
from service.app import create_app
from service.cli import build_parser, main
from service.settings import Settings

from .conftest import LiveServer
from dicecam_testing.turns import QueueReader

FARKLE = ("morning-roll", "farkle-five", "greed")
TOL = 1e-9


def rule_sets(game: str) -> list[dict[str, Any]]:
    """Every combination of each house rule's values (true/false, the text choices; a whole
    number at its default and one other)."""
    axes = []
    for key, default in HOUSE_RULES[game].items():
        if isinstance(default, bool):
            axes.append([(key, False), (key, True)])
        elif key in HOUSE_RULE_CHOICES.get(game, {}):
            axes.append([(key, v) for v in HOUSE_RULE_CHOICES[game][key]])
        else:
            axes.append([(key, default), (key, default * 2)])
    return [dict(combo) for combo in product(*axes)]


GAME_RULES = [(g, r) for g in HOUSE_RULES for r in rule_sets(g)]
FARKLE_RULES = [(g, r) for g, r in GAME_RULES if g in FARKLE]


def rule_args(rules: dict[str, Any]) -> list[str]:
    return [f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in rules.items()]


def every_roll(n_max: int) -> list[list[int]]:
    return [list(roll) for n in range(1, n_max + 1) for roll, _p in distinct_rolls(n)]


# --- the three interfaces ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def api() -> Iterator[httpx.Client]:
    with tempfile.TemporaryDirectory() as data_dir:
        app = create_app(
            Settings(data_dir=data_dir), reader=QueueReader(), tracker_app=None, submitter=None
        )
        with (
            LiveServer(app) as server,
            httpx.Client(base_url=server.url + "/api/v1", timeout=60) as client,
        ):
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


def http_score(api: httpx.Client, game: str, values: list[int], rules: dict, **params) -> dict:
    r = api.post(
        "/score", params={"game": game, "rule": rule_args(rules), **params}, json={"values": values}
    )
    assert r.status_code == 200, (game, values, rules, params, r.text)
    return r.json()


# --- comparisons -------------------------------------------------------------------------------
def plain_options(options) -> list[dict[str, Any]]:
    return [
        {"keep": list(o.keep), "then": o.then, "points": o.points, "forced": o.forced_reroll}
        for o in options
    ]


def assert_same_options(got: list[dict], options, where: Any) -> None:
    """``got`` (JSON options of an interface) are the advisor's ``options``: same order, same
    fields, expected values within 1e-9."""
    shown = [
        {"keep": o["keep"], "then": o["then"], "points": o["points"], "forced": o["forced_reroll"]}
        for o in got
    ]
    assert shown == plain_options(options), where
    for o, ref in zip(got, options, strict=True):
        assert abs(o["expected"] - ref.expected) <= TOL, (where, o, ref)


def assert_keeps_ranked(keeps: list[dict], game: Any, roll: list[int], options, where) -> None:
    """The keeps an HTTP answer offers: the rules' keeps, each with its best advised move."""
    ref = {(tuple(k.dice), k.forced_reroll): k for k in game.keeps(roll)}
    assert len(keeps) == len(ref), where
    for k in keeps:
        key = (tuple(k["dice"]), k["forced_reroll"])
        assert key in ref and k["points"] == ref[key].points, (where, k)
        assert k["wins_game"] == ref[key].wins_game, (where, k)
        best = max(
            (o for o in options if (o.keep, o.forced_reroll) == key), key=lambda o: o.expected
        )
        assert abs(k["expected"] - best.expected) <= TOL and k["then"] == best.then, (where, k)


# --- the Farkle family: every roll ------------------------------------------------------------
@pytest.mark.parametrize(("game", "rules"), FARKLE_RULES, ids=lambda v: str(v))
def test_every_farkle_roll_scores_and_advises_alike(api, cli, game, rules):
    rules_obj = get_game(game, **rules)
    advisor = get_advisor(game, **rules)
    rolls = every_roll(rules_obj.n_dice)
    flags = [a for r in rule_args(rules) for a in ("--rule", r)]
    for i, roll in enumerate(rolls):
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
        if i % 2 and game == "morning-roll":
            continue  # the HTTP side takes every other 6-dice roll: the test's time
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
