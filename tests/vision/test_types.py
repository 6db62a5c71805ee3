"""A reading's dice and its counts (values, off the table, cocked, missing, bust) and its JSON."""

from __future__ import annotations

import json

from vision.types import Die, Reading


def test_values_are_the_flat_dice_on_the_table_left_to_right():
    reading = Reading(
        300,
        100,
        [
            Die(6, (200, 10, 230, 40), 0.9),
            Die(2, (10, 10, 40, 40), 0.9),
            Die(4, (100, 10, 130, 40), 0.9, on_table=False),
            Die(5, (150, 10, 180, 40), 0.9, cocked=True),
            Die(3, (60, 10, 90, 40), 0.9, unsure=True),
        ],
    )
    assert reading.values == [2, 3, 6]
    assert (reading.off_table, reading.cocked, reading.unsure) == (1, 1, 1)


def test_a_die_off_the_table_counts_off_whatever_else_it_is():
    off_and_leaning = Die(3, (10, 10, 40, 40), 0.8, on_table=False, cocked=True, unsure=True)
    reading = Reading(100, 100, [off_and_leaning, Die(5, (50, 10, 80, 40), 0.8, cocked=True)])
    # off the table is what matters for the roll: not counted cocked or unsure as well
    assert (reading.off_table, reading.cocked, reading.unsure) == (1, 1, 0)
    assert reading.bust and reading.values == []
    leaning_unsure = Reading(100, 100, [Die(5, (50, 10, 80, 40), 0.8, cocked=True, unsure=True)])
    assert (leaning_unsure.cocked, leaning_unsure.unsure) == (1, 0)


def test_missing_dice_are_a_bust_by_default_and_only_counted_when_asked_not_to_be():
    die = Die(2, (10, 10, 40, 40), 0.9)
    short = Reading(100, 100, [die], expected_dice=3)
    assert (short.missing, short.bust, short.needs_check) == (2, True, True)
    ask = Reading(100, 100, [die], expected_dice=3, missing_is_bust=False)
    assert (ask.missing, ask.bust, ask.needs_check) == (2, False, True)
    off = Reading(100, 100, [Die(2, (10, 10, 40, 40), 0.9, on_table=False)], missing_is_bust=False)
    assert off.bust  # a die off the table is a bust either way
    extra = Reading(100, 100, [die, die, die], expected_dice=2)  # more found than rolled
    assert (extra.missing, extra.bust, extra.needs_check) == (0, False, False)
    assert Reading(100, 100, [die]).missing == 0  # no count given: nothing missing


def test_each_doubtful_die_sends_the_reading_to_be_checked_but_left_out_boxes_do_not():
    plain = Die(2, (10, 10, 40, 40), 0.9)
    assert not Reading(100, 100, [plain], dropped=3).needs_check
    for doubt in ({"faint": True}, {"cocked": True}, {"unsure": True}, {"on_table": False}):
        die = Die(4, (50, 10, 80, 40), 0.9, **doubt)
        assert Reading(100, 100, [plain, die]).needs_check, doubt


def test_the_json_rounds_figures_and_says_everything_it_counted():
    die = Die(3, (10.26, 20.04, 40.55, 50.0), 0.987654, face_confidence=0.912345, unsure=True)
    reading = Reading(
        640,
        480,
        [die, Die(1, (5, 5, 9, 9), 0.3, faint=True)],
        outline=[(0.04, 1.26), (600.0, 470.55)],
        expected_dice=3,
        latency_ms=12.3456,
        added=1,
        dropped=2,
        outline_source="calibration",
        outline_note="drawn on a photo of another shape",
    )
    out = json.loads(json.dumps(reading.to_dict()))
    first = out["dice"][0]
    assert first["box"] == [10.3, 20.0, 40.5, 50.0]
    assert (first["confidence"], first["face_confidence"]) == (0.9877, 0.9123)
    assert first["unsure"] and not first["cocked"] and first["on_table"]
    assert out["dice"][1]["face_confidence"] is None and out["dice"][1]["faint"]
    assert out["latency_ms"] == 12.35
    assert out["outline"] == [[0.0, 1.3], [600.0, 470.6]]
    assert (out["outline_source"], out["outline_note"]) == (
        "calibration",
        "drawn on a photo of another shape",
    )
    assert (out["expected_dice"], out["missing"], out["added"], out["dropped"]) == (3, 1, 1, 2)
    assert (out["values"], out["unsure"], out["bust"], out["needs_check"]) == (
        [1, 3],
        1,
        True,
        True,
    )
    assert Reading(10, 10).to_dict()["outline"] is None
