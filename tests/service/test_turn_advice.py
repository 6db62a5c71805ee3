"""The advice attached to a turn: each keep ranked by the advisor's best expected score."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from service.turn_advice import plain, rank_keeps


def _keep(dice: list[int], points: int, **extra) -> dict:
    return {"dice": dice, "points": points, **extra}


def test_each_keep_gets_its_best_advice_whatever_the_order_of_its_dice():
    advice = [
        {"keep": [1, 5], "expected": 300.0, "then": "bank"},
        {"keep": [5, 1], "expected": 420.5, "then": "roll"},  # the same keep, better
        {"keep": [1, 5], "expected": 250.0, "then": "bank"},  # and worse, after it
        {"keep": [1], "expected": 390.0, "then": "roll"},
    ]
    ranked = rank_keeps([_keep([1], 100), _keep([5, 1], 150), _keep([5], 50)], advice)
    assert [(k["dice"], k["expected"], k["then"]) for k in ranked] == [
        ([5, 1], 420.5, "roll"),
        ([1], 390.0, "roll"),
        ([5], None, None),  # no advice for it: last
    ]
    assert ranked[0]["points"] == 150  # the keep's own fields are kept


def test_a_forced_reroll_keep_is_advised_apart_from_the_same_dice_kept_to_bank():
    advice = [
        {"keep": [1, 1, 1, 1, 5, 5], "forced_reroll": True, "expected": 2500.0, "then": "roll"},
        {"keep": [1, 1, 1, 1, 5, 5], "forced_reroll": False, "expected": 2100.0, "then": "bank"},
    ]
    dice = [1, 1, 1, 1, 5, 5]
    ranked = rank_keeps(
        [_keep(dice, 2100, forced_reroll=False), _keep(dice, 2500, forced_reroll=True)], advice
    )
    assert [(k["forced_reroll"], k["expected"], k["then"]) for k in ranked] == [
        (True, 2500.0, "roll"),
        (False, 2100.0, "bank"),
    ]


def test_keeps_of_equal_expectation_rank_by_their_points_and_none_comes_last():
    advice = [{"keep": [1], "expected": 0.0, "then": "bank"}, {"keep": [5], "expected": 0.0}]
    # a keep the advisor said nothing of comes after one it says is worth nothing, points or not
    ranked = rank_keeps([_keep([2], 200), _keep([5], 50), _keep([1], 100)], advice)
    assert [k["dice"] for k in ranked] == [[1], [5], [2]]
    assert ranked[2]["expected"] is None and ranked[0]["expected"] == 0.0


class Option(NamedTuple):
    keep: tuple[int, ...]
    score: int


@dataclass
class Turn:
    options: list[Option]
    by_value: dict[int, Option]


class Scored:
    def to_dict(self) -> dict:
        return {"points": 50}

    def _asdict(self) -> dict:  # to_dict wins
        return {"points": -1}


def test_plain_turns_the_advisors_objects_into_json_values_all_the_way_down():
    turn = Turn([Option((1, 5), 150)], {1: Option((1,), 100)})
    assert plain(turn) == {
        "options": [{"keep": [1, 5], "score": 150}],
        "by_value": {"1": {"keep": [1], "score": 100}},
    }
    assert plain([Scored(), (Option((2,), 0),)]) == [{"points": 50}, [{"keep": [2], "score": 0}]]
