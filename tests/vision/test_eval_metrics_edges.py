"""Edges of the `dicecam eval` figures (vision.metrics.EvalResult) that the figures in the model
cards rest on, each on a tiny case whose right count is worked out by hand in the test."""

from __future__ import annotations

import pytest

from vision.matching import TruthDie
from vision.metrics import SURE, EvalResult
from vision.types import Die, Reading


def _die(value: int, x: float, **kw) -> Die:
    return Die(value, (x, 0, x + 10, 10), kw.pop("confidence", 0.9), **kw)


def test_a_flat_die_read_right_but_flagged_cocked_counts_as_misread():
    result = EvalResult()
    # one flat 3 read as a 3 but flagged cocked (the player would re-roll it) and unsure:
    # 1 marked, 1 of them misread, 1 misread in all
    result.add(
        [TruthDie(3, (0, 0, 10, 10))], Reading(100, 100, [_die(3, 0, cocked=True, unsure=True)])
    )
    assert result.unsure == [1, 1, 1]
    assert result.to_dict()["unsure_dice"] == {"marked": 1, "marked_misread": 1, "misread": 1}


def test_clear_dice_count_a_flag_cocked_as_wrong_and_leave_cocked_truth_out():
    result = EvalResult()
    truth = [
        TruthDie(3, (0, 0, 10, 10), "table", clear=True),  # read 3, flagged cocked: not right
        TruthDie(5, (20, 0, 30, 10), "table", clear=True),  # read 5: right
        TruthDie(None, (40, 0, 50, 10), "cocked", clear=True),  # cocked: no clear die at all
    ]
    reading = Reading(100, 100, [_die(3, 0, cocked=True), _die(5, 20), _die(1, 40, cocked=True)])
    result.add(truth, reading)
    # [read right, found, true]: 1 of the 2 flat clear dice read right, both found, 2 of them
    assert result.clear == [1, 2, 2]
    clear = result.to_dict()["clear_dice"]
    assert (clear["face_accuracy"], clear["recall"]) == (0.5, 1.0)


def test_an_unreadable_photo_counts_its_cocked_and_clear_dice_as_missed_and_is_a_mistake():
    result = EvalResult()
    truth = [
        TruthDie(None, (0, 0, 10, 10), "cocked"),
        TruthDie(4, (20, 0, 30, 10), "table", clear=True),
        TruthDie(2, (40, 0, 50, 10), "table", clear=False),
    ]
    result.add_error("broken.jpg", "not an image", truth)
    # 3 true dice, none found: 1 cocked of which 0 flagged; 1 clear die of which 0 found
    assert (result.truth_dice, result.truth_cocked, result.cocked_recall) == (3, 1, 0.0)
    assert result.clear == [0, 0, 1] and result.to_dict()["clear_dice"]["recall"] == 0.0
    assert result.mistakes == ["broken.jpg"] and result.exact_accuracy == 0.0
    # a photo read exactly after it: 1 failed photo of 2, 1 mistake
    result.add([TruthDie(6, (0, 0, 10, 10))], Reading(100, 100, [_die(6, 0)], image="fine.jpg"))
    d = result.to_dict()
    assert (d["images"], d["failed_images"], d["exact_images"]) == (2, 1, 1)
    assert d["errors"] == [{"image": "broken.jpg", "error": "not an image"}]


def test_failed_images_counts_unreadable_photos_not_photos_read_wrong():
    result = EvalResult()
    result.add([TruthDie(6, (0, 0, 10, 10))], Reading(100, 100, [_die(5, 0)], image="misread.jpg"))
    result.add_error("broken.jpg", "not an image", [TruthDie(1, (0, 0, 10, 10))])
    # 2 mistakes, 1 of them unreadable
    assert result.mistakes == ["misread.jpg", "broken.jpg"]
    assert result.to_dict()["failed_images"] == 1
    assert "photos            2 (1 unreadable)" in result.format()


def test_a_die_read_at_exactly_sure_confidence_flags_an_empty_label():
    result = EvalResult()
    at_sure = _die(4, 0, confidence=SURE)
    result.add([], Reading(100, 100, [at_sure, _die(2, 20, confidence=SURE - 0.01)], image="e.jpg"))
    assert result.unlabelled == [("e.jpg", 1)]  # the die at SURE counts, the one under it not


def test_median_latency_is_the_middle_reading_not_the_mean():
    result = EvalResult()
    for ms in (10.0, 20.0, 90.0):  # mean 40, median 20
        result.add([], Reading(100, 100, [], latency_ms=ms))
    assert result.median_latency_ms == 20.0
    assert result.to_dict()["median_latency_ms"] == 20.0
    assert "median latency    20.0 ms" in result.format()


def test_flat_dice_flagged_cocked_are_reported_on_a_set_without_cocked_dice():
    result = EvalResult()
    truth = [TruthDie(2, (0, 0, 10, 10)), TruthDie(5, (20, 0, 30, 10))]
    result.add(truth, Reading(100, 100, [_die(2, 0, cocked=True), _die(5, 20)]))
    # no cocked die on the set, yet 1 of 2 flat dice flagged cocked: the report says it
    assert result.truth_cocked == 0 and result.flat_called_cocked == pytest.approx(0.5)
    text = result.format()
    assert "flat as cocked    50.00%  (1/2 dice with a clear top face flagged cocked)" in text
    assert "cocked recall" not in text
