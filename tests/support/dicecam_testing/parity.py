"""Comparing the scoring package with the interfaces that serve it (the CLI, ``/api/v1/score``,
``/api/v1/turns``): every house-rule set of a game, every roll, one service for a test module,
and assertions that an interface's options and keeps are the advisor's."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import product
from typing import Any

import httpx

from scoring import HOUSE_RULE_CHOICES, HOUSE_RULES
from scoring.dice import distinct_rolls
from service.app import create_app
from service.settings import Settings

from dicecam_testing.servers import LiveServer
from dicecam_testing.turns import QueueReader

__all__ = [
    "FARKLE",
    "FARKLE_RULES",
    "GAME_RULES",
    "TOL",
    "assert_keeps_ranked",
    "assert_same_options",
    "every_roll",
    "http_score",
    "plain_options",
    "rule_args",
    "rule_sets",
    "scoring_api",
]

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


@contextmanager
def scoring_api() -> Iterator[httpx.Client]:
    """A client of ``/api/v1`` on a real service (no tracker, no submitter, a queued reader)."""
    with tempfile.TemporaryDirectory() as data_dir:
        app = create_app(
            Settings(data_dir=data_dir), reader=QueueReader(), tracker_app=None, submitter=None
        )
        server = LiveServer(app).start()
        try:
            with httpx.Client(base_url=server.url + "/api/v1", timeout=60) as client:
                yield client
        finally:
            server.stop()


def http_score(api: httpx.Client, game: str, values: list[int], rules: dict, **params) -> dict:
    r = api.post(
        "/score", params={"game": game, "rule": rule_args(rules), **params}, json={"values": values}
    )
    assert r.status_code == 200, (game, values, rules, params, r.text)
    return r.json()


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
    """The keeps an HTTP answer offers: the rules' keeps, each with its best advised move,
    the best first."""
    ref = {(tuple(k.dice), k.forced_reroll): k for k in game.keeps(roll)}
    assert len(keeps) == len(ref), where
    ranked = [k["expected"] for k in keeps]
    assert ranked == sorted(ranked, reverse=True), where
    for k in keeps:
        key = (tuple(k["dice"]), k["forced_reroll"])
        assert key in ref and k["points"] == ref[key].points, (where, k)
        assert k["wins_game"] == ref[key].wins_game, (where, k)
        best = max(
            (o for o in options if (o.keep, o.forced_reroll) == key), key=lambda o: o.expected
        )
        assert abs(k["expected"] - best.expected) <= TOL and k["then"] == best.then, (where, k)
