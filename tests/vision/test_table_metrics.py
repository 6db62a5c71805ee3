"""Off-table figures (vision.table_metrics.TableCounts) on hand-made readings whose right
counts are worked out in each test."""

from __future__ import annotations

from vision.matching import TruthDie
from vision.metrics import EvalResult
from vision.types import Die, Reading

OFF = "off_table"


def _die(value: int, x: float, *, on_table: bool = True) -> Die:
    return Die(value, (x, 0, x + 10, 10), 0.9, on_table=on_table)


def test_off_table_dice_found_where_only_the_floor_is_in_view_count_apart():
    result = EvalResult()
    # the table's edge in view: 2 dice off, 1 found off
    truth = [TruthDie(1, (0, 0, 10, 10), OFF), TruthDie(2, (20, 0, 30, 10), OFF)]
    reading = Reading(100, 100, [_die(1, 0, on_table=False), _die(2, 20)])
    result.add(truth, reading, states_known=True, surface_in_view=True)
    # only the floor in view: 2 dice off, 1 found off
    truth = [TruthDie(3, (0, 0, 10, 10), OFF), TruthDie(4, (20, 0, 30, 10), OFF)]
    reading = Reading(100, 100, [_die(3, 0, on_table=False), _die(4, 20)])
    result.add(truth, reading, states_known=True, surface_in_view=False)
    t = result.table
    # all: 2/4; surface in view: (2 - 1)/(4 - 2) = 1/2; floor only: 1/2
    assert (t.found_off, t.truth_off, t.unseen_found, t.unseen_off) == (2, 4, 1, 2)
    assert t.recall == 0.5 and t.recall_in_view == 0.5
    assert t.to_dict()["no_surface_in_view"] == {"off_table_dice": 2, "found": 1}
    assert "surface in view 50.00%  (1/2); no surface in view (only the floor) 1/2" in (
        result.format()
    )


def test_in_view_recall_leaves_out_the_dice_found_where_no_surface_shows():
    result = EvalResult()
    # in view: 1 die off, missed; floor only: 1 die off, found. In view: 0/1, not 1/1
    result.add(
        [TruthDie(1, (0, 0, 10, 10), OFF)],
        Reading(100, 100, [_die(1, 0)]),
        states_known=True,
        surface_in_view=True,
    )
    result.add(
        [TruthDie(2, (0, 0, 10, 10), OFF)],
        Reading(100, 100, [_die(2, 0, on_table=False)]),
        states_known=True,
        surface_in_view=False,
    )
    assert result.table.recall == 0.5 and result.table.recall_in_view == 0.0
    assert result.table.to_dict()["recall_surface_in_view"] == 0.0


def test_the_any_die_off_line_shows_only_when_dice_fell_out_of_some_photo():
    result = EvalResult()
    # a labelled die off, called off: 1 bust roll of 1, in view and in all
    truth = [TruthDie(1, (0, 0, 10, 10), OFF)]
    result.add(truth, Reading(100, 100, [_die(1, 0, on_table=False)]), states_known=True)
    assert (result.table.bust_rolls, result.table.all_bust_rolls) == (1, 1)
    assert "any die off" not in result.format()
    # a die out of the photo left the table, the one in view read on it: 2 rolls, 1 caught
    truth = [TruthDie(2, (0, 0, 10, 10), "table")]
    result.add(truth, Reading(100, 100, [_die(2, 0)]), states_known=True, truth_bust=True)
    t = result.table
    assert (t.all_busts_caught, t.all_bust_rolls, t.bust_rolls) == (1, 2, 1)
    assert "  any die off     50.00%  (1/2 rolls with a die off the table" in result.format()


def test_a_die_called_off_where_no_die_is_counts_against_off_table_precision():
    result = EvalResult()
    # 1 die on the table read right, plus a stray box (no true die there) called off:
    # 1 off call, 0 of them right, and the clean roll is busted falsely
    truth = [TruthDie(2, (0, 0, 10, 10), "table")]
    reading = Reading(100, 100, [_die(2, 0), _die(5, 60, on_table=False)], image="stray.jpg")
    result.add(truth, reading, states_known=True)
    t = result.table
    assert (t.predicted_off_right, t.predicted_off) == (0, 1) and t.precision == 0.0
    assert (t.false_busts, t.clean_images, t.false_bust_images) == (1, 1, ["stray.jpg"])


def test_no_unseen_dice_line_when_every_false_bust_is_the_readers_own():
    result = EvalResult()
    # 2 rolled, both in view, 1 missed: short of a die the photo shows (0 unseen)
    two = [TruthDie(2, (0, 0, 10, 10), "table"), TruthDie(4, (20, 0, 30, 10), "table")]
    result.add(two, Reading(100, 100, [_die(2, 0)], expected_dice=2), states_known=True)
    assert (result.table.false_busts, result.table.unseen_busts) == (1, 0)
    text = result.format()
    assert "false busts       100.00%  (1/1 photos with every die on the table)" in text
    assert "unseen dice" not in text and "the reader's own" not in text
