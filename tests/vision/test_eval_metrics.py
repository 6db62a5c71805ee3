"""The figures of `dicecam eval` (vision.metrics.EvalResult) on hand-made readings, and how
dice are matched to labels."""

from __future__ import annotations

import pytest

from vision import match_dice
from vision.matching import ROLLING, TruthDie, clear_die, table_state
from vision.metrics import EvalResult
from vision.types import Die, Reading


def test_match_by_centre_either_way_one_to_one_nearest_first():
    truth = [(0, 0, 100, 100), (200, 0, 220, 20)]
    predicted = [
        (40, 40, 60, 60),  # top face box inside the whole-die box: matches truth 0
        (45, 45, 70, 70),  # also inside truth 0 but farther: left unmatched
        (140, -60, 250, 70),  # a big box whose centre misses, but truth 1's centre is inside it
        (500, 500, 510, 510),
    ]
    assert match_dice(truth, predicted) == [(0, 0), (1, 2)]
    assert match_dice([], predicted) == []
    assert match_dice(truth, []) == []


def test_matching_pairs_nearest_centres_first_and_each_prediction_once():
    # truth 0 could take either prediction; the nearer, listed second, is its pair, so that
    # truth 1 gets the other one
    truth = [(0, 0, 40, 40), (30, 0, 50, 20)]
    predicted = [(25, 0, 45, 20), (5, 5, 35, 35)]
    assert match_dice(truth, predicted) == [(0, 1), (1, 0)]
    # one prediction between two true dice is the pair of one of them only
    assert match_dice([(0, 0, 20, 20), (10, 0, 30, 20)], [(8, 0, 22, 20)]) == [(0, 0)]


def test_a_clear_die_lies_flat_on_or_off_the_table_from_the_limits_up():
    sharp = {"motion_blur_px": 0.0, "defocus_sigma": 1.0}  # the most defocus a clear die has
    die = {"state": "table", "moving": False, "visible": 0.9}  # the least of it in view
    assert clear_die(die, sharp) is True
    assert clear_die({**die, "state": "off_table"}, sharp) is True  # off the table: readable
    assert clear_die({**die, "visible": 0.89}, sharp) is False
    assert clear_die(die, {**sharp, "defocus_sigma": 1.01}) is False
    assert clear_die({**die, "state": "cocked"}, sharp) is False


def test_a_die_in_the_air_rolls_only_above_the_surface_both_ways():
    surface = {"table": [10.0, 8.0], "interior": None}
    assert table_state({"state": "in_air", "position": [2.0, 7.9, 1.0]}, surface) == ROLLING
    assert table_state({"state": "in_air", "position": [2.0, 9.0, 1.0]}, surface) == "in_air"
    assert table_state({"state": "in_air", "position": [2.0, -9.0, 1.0]}, surface) == "in_air"


def _die(value, x, *, cocked=False, on_table=True):
    return Die(value, (x, 0, x + 10, 10), 0.9, on_table=on_table, cocked=cocked)


def test_figures_on_hand_made_readings():
    result = EvalResult()
    # photo 1: read exactly
    result.add(
        [TruthDie(1, (0, 0, 10, 10)), TruthDie(6, (20, 0, 30, 10))],
        Reading(100, 100, [_die(1, 0), _die(6, 20)]),
    )
    # photo 2: one 4 read as 5, one die missed, one extra prediction
    result.add(
        [TruthDie(4, (0, 0, 10, 10)), TruthDie(2, (40, 0, 50, 10))],
        Reading(100, 100, [_die(5, 0), _die(3, 80)]),
    )
    # photo 3: a cocked die found (flagged cocked) and a 3 read right
    result.add(
        [TruthDie(None, (0, 0, 10, 10)), TruthDie(3, (20, 0, 30, 10))],
        Reading(100, 100, [_die(2, 0, cocked=True), _die(3, 20)]),
    )
    assert result.images == 3 and result.truth_dice == 6 and result.predicted_dice == 6
    assert result.matched == 5
    assert result.face_accuracy == pytest.approx(3 / 4)  # the cocked die does not count
    assert result.recall == pytest.approx(5 / 6)
    assert result.precision == pytest.approx(5 / 6)
    assert result.exact_accuracy == pytest.approx(2 / 3)
    assert result.cocked_recall == 1.0 and result.flat_called_cocked == 0.0
    assert (
        result.confusion[3][4] == 1 and result.confusion[0][0] == 1 and result.confusion[5][5] == 1
    )
    assert sum(map(sum, result.confusion)) == 4
    d = result.to_dict()
    assert d["face_accuracy"] == 0.75 and d["confusion"][3][4] == 1
    text = result.format()
    assert "face accuracy     75.00%" in text and "cocked recall" in text
    # --json gives the counts the report prints beside each share (it gave only the shares,
    # and flat_called_cocked, a count, where the property of that name is a share)
    assert "(3/4 matched dice)" in text and (d["face_read_right"], d["face_matched_dice"]) == (3, 4)
    assert "(2/3)" in text and d["exact_images"] == 2
    assert d["flat_called_cocked"] == 0 and d["flat_called_cocked_share"] == 0.0


def test_cocked_recall_counts_only_dice_flagged_cocked():
    result = EvalResult()
    # two cocked dice: one found and flagged, one found but read as a flat 4; a flat 2 flagged
    result.add(
        [
            TruthDie(None, (0, 0, 10, 10)),
            TruthDie(None, (20, 0, 30, 10)),
            TruthDie(2, (40, 0, 50, 10)),
        ],
        Reading(100, 100, [_die(1, 0, cocked=True), _die(4, 20), _die(2, 40, cocked=True)]),
    )
    assert (result.found_cocked, result.flagged_cocked, result.truth_cocked) == (2, 1, 2)
    assert result.cocked_recall == 0.5
    assert result.flat_called_cocked == 1.0 and result.exact_accuracy == 0.0
    d = result.to_dict()
    assert (d["cocked_recall"], d["cocked_found"], d["cocked_flagged"]) == (0.5, 2, 1)
    assert d["flat_called_cocked"] == 1
    text = result.format()
    assert "cocked recall     50.00%  (1/2 flagged cocked; 2 found at all)" in text
    assert "flat as cocked    100.00%  (1/1" in text


def test_recall_by_die_size_counts_found_and_true_dice_per_bin():
    result = EvalResult()
    small, mid, big = (0, 0, 15, 12), (100, 0, 140, 25), (200, 0, 300, 90)  # 15, 40, 100 px
    result.add(
        [TruthDie(1, small), TruthDie(2, mid), TruthDie(3, big)],
        Reading(400, 400, [_die(2, 100), _die(3, 200)]),  # the small die is missed
    )
    result.add_error("broken.jpg", "not an image", [TruthDie(4, big)])
    assert result.by_size == [[0, 1], [0, 0], [1, 1], [0, 0], [1, 2]]
    d = result.to_dict()["recall_by_size"]
    assert d["0-20 px"] == {"found": 0, "dice": 1} and d["80+ px"] == {"found": 1, "dice": 2}
    assert "recall by size    0-20 px 0/1  30-50 px 1/1  80+ px 1/2" in result.format()


def test_flat_die_read_as_cocked_spoils_the_exact_photo():
    result = EvalResult()
    result.add([TruthDie(3, (0, 0, 10, 10))], Reading(100, 100, [_die(3, 0, cocked=True)]))
    assert result.face_accuracy == 1.0 and result.exact_accuracy == 0.0


def test_a_cocked_die_read_flat_spoils_the_exact_photo_and_one_flagged_cocked_does_not():
    result = EvalResult()
    result.add([TruthDie(None, (0, 0, 10, 10))], Reading(100, 100, [_die(3, 0)]))
    assert result.exact_accuracy == 0.0 and result.mistakes == ["#1"]
    result.add([TruthDie(None, (0, 0, 10, 10))], Reading(100, 100, [_die(3, 0, cocked=True)]))
    assert result.exact_images == 1 and result.mistakes == ["#1"]


def test_a_die_on_a_size_bin_edge_goes_in_the_bin_that_starts_there():
    result = EvalResult()
    edge, flat = (0, 0, 20, 20), (40, 5, 40, 5)  # 20 px; a degenerate box counts as tiny
    result.add([TruthDie(1, edge), TruthDie(2, flat)], Reading(100, 100, []))
    assert result.by_size == [[0, 1], [0, 1], [0, 0], [0, 0], [0, 0]]


def test_off_table_figures_from_states():
    result = EvalResult()
    truth = [TruthDie(2, (0, 0, 10, 10), "table"), TruthDie(5, (20, 0, 30, 10), "off_table")]
    result.add(
        truth, Reading(100, 100, [_die(2, 0), _die(5, 20, on_table=False)]), states_known=True
    )
    truth = [TruthDie(2, (0, 0, 10, 10), "table"), TruthDie(4, (20, 0, 30, 10), "in_air")]
    result.add(
        truth, Reading(100, 100, [_die(2, 0, on_table=False), _die(4, 20)]), states_known=True
    )
    truth = [TruthDie(1, (0, 0, 10, 10), "table")]
    result.add(truth, Reading(100, 100, [_die(1, 0, on_table=False)]), states_known=True)
    result.add([TruthDie(1, (0, 0, 10, 10))], Reading(100, 100, [_die(1, 0)]))  # no sidecar
    # a hidden die left the table: not a clean photo, so no false bust is possible here
    truth = [TruthDie(3, (0, 0, 10, 10), "table")]
    result.add(truth, Reading(100, 100, [_die(3, 0)]), states_known=True, truth_bust=True)
    t = result.table
    assert t.images == 4 and t.truth_off == 2 and t.clean_images == 1
    assert t.recall == 0.5
    assert t.precision == pytest.approx(1 / 3)
    assert t.false_bust_rate == 1.0  # the only all-on-table photo was called a bust
    assert "off-table recall  50.00%" in result.format()
    assert result.to_dict()["table"]["recall"] == 0.5
    assert "off-table prec.   33.33%  (1/3)" in result.format()
    table = result.to_dict()["table"]
    assert (table["predicted_off_right"], table["predicted_off"]) == (1, 3)
    # both rolls with a die in view off were called busts (the second by the wrong die)
    assert t.bust_rolls == 2 and t.busts_caught == 2


def test_a_roll_still_in_the_air_is_neither_a_bust_nor_clean():
    result = EvalResult()
    truth = [TruthDie(2, (0, 0, 10, 10), "table"), TruthDie(4, (20, 0, 30, 10), ROLLING)]
    # called off: not a false bust (it has not landed), not an off-table die found either
    result.add(
        truth, Reading(100, 100, [_die(2, 0), _die(4, 20, on_table=False)]), states_known=True
    )
    # a hidden die still rolling (the sidecar's verdict): the same
    truth = [TruthDie(3, (0, 0, 10, 10), "table")]
    reading = Reading(100, 100, [_die(3, 0, on_table=False)])
    result.add(truth, reading, states_known=True, truth_bust=False, settled=False)
    t = result.table
    assert t.unsettled == 2 and t.clean_images == 0 and t.false_busts == 0
    assert t.truth_off == 0 and t.bust_rolls == 0 and t.predicted_off == 2
    assert result.to_dict()["table"]["unsettled"] == 2
    assert "still rolling     2 photos with a die in the air above the surface" in result.format()


def test_busts_caught_counts_rolls_not_dice():
    result = EvalResult()
    off = "off_table"
    # two dice off, one found: the roll is a bust caught
    truth = [TruthDie(1, (0, 0, 10, 10), off), TruthDie(2, (20, 0, 30, 10), off)]
    result.add(
        truth, Reading(100, 100, [_die(1, 0, on_table=False), _die(2, 20)]), states_known=True
    )
    # one die off, called on the table: a bust missed
    truth = [TruthDie(3, (0, 0, 10, 10), "table"), TruthDie(4, (20, 0, 30, 10), off)]
    result.add(truth, Reading(100, 100, [_die(3, 0), _die(4, 20)]), states_known=True)
    # a clean roll read clean: neither a bust roll nor a false bust
    result.add(
        [TruthDie(5, (0, 0, 10, 10), "table")], Reading(100, 100, [_die(5, 0)]), states_known=True
    )
    t = result.table
    assert (t.found_off, t.truth_off) == (1, 3)
    assert (t.busts_caught, t.bust_rolls) == (1, 2) and t.bust_recall == 0.5
    assert t.false_busts == 0 and t.clean_images == 1
    assert "busts caught      50.00%  (1/2 photos with a die in view off the table)" in (
        result.format()
    )
    assert result.to_dict()["table"]["bust_recall"] == 0.5


def test_dice_count_figures_add_up_photos_read_short_added_and_dropped():
    truth = [TruthDie(5, (0, 0, 10, 10)), TruthDie(2, (20, 0, 30, 10))]
    result = EvalResult()
    short = Reading(100, 100, [Die(5, (1, 1, 9, 9), 0.9)], expected_dice=2, added=1)
    result.add(truth, short)
    result.add(truth, Reading(100, 100, [], expected_dice=None))
    fitted = [Die(5, (1, 1, 9, 9), 0.9), Die(2, (21, 1, 29, 9), 0.9)]
    result.add(truth, Reading(100, 100, fitted, expected_dice=2, dropped=3))
    assert result.to_dict()["dice_count"] == {"photos": 2, "short": 1, "added": 1, "dropped": 3}
    assert "dice count        told on 2 photos: 1 read short (dice missing" in result.format()


def test_unsure_dice_and_silent_errors_are_counted():
    truth = [TruthDie(5, (0, 0, 10, 10)), TruthDie(2, (20, 0, 30, 10))]
    result = EvalResult()
    right = [Die(5, (1, 1, 9, 9), 0.9), Die(2, (21, 1, 29, 9), 0.9, unsure=True)]
    result.add(truth, Reading(100, 100, right))  # read right, yet asks for a check
    caught = [Die(5, (1, 1, 9, 9), 0.9), Die(3, (21, 1, 29, 9), 0.9, unsure=True)]
    result.add(truth, Reading(100, 100, caught))  # misread, and says so
    silent = [Die(6, (1, 1, 9, 9), 0.9), Die(2, (21, 1, 29, 9), 0.9)]
    result.add(truth, Reading(100, 100, silent))  # misread with nothing to check
    short = [Die(5, (1, 1, 9, 9), 0.9)]
    result.add(truth, Reading(100, 100, short, expected_dice=2))  # missing: says so
    result.add(truth, Reading(100, 100, short))  # no count told: a silent miss
    d = result.to_dict()
    assert d["unsure_dice"] == {"marked": 2, "marked_misread": 1, "misread": 2}
    assert (d["photos_to_check"], d["photos_to_check_exact"], d["silent_errors"]) == (3, 1, 2)
    assert "silent errors 2/5" in result.format()
    assert "2 marked: 1 of the 2 misread, 1 read right" in result.format()


def test_photos_labelled_empty_but_read_with_sure_dice_are_flagged_for_a_label_check():
    result = EvalResult()
    sure = [Die(3, (0, 0, 10, 10), 0.8), Die(5, (20, 0, 30, 10), 0.6), Die(2, (40, 0, 50, 10), 0.3)]
    result.add([], Reading(100, 100, sure, image="missing-labels.jpg"))
    result.add([], Reading(100, 100, [Die(4, (0, 0, 10, 10), 0.3)], image="faint.jpg"))
    result.add([], Reading(100, 100, [], image="empty.jpg"))
    truth = [TruthDie(3, (0, 0, 10, 10))]
    result.add(truth, Reading(100, 100, [Die(3, (0, 0, 10, 10), 0.9)], image="fine.jpg"))
    assert result.unlabelled == [("missing-labels.jpg", 2)]
    assert result.to_dict()["labels_to_check"] == [{"image": "missing-labels.jpg", "sure_dice": 2}]
    assert "labels to check   1 photos labelled with no die hold 2 dice" in result.format()
    assert "labels to check" not in EvalResult().format()


def test_off_table_recall_apart_where_no_surface_is_in_view():
    result = EvalResult()
    off = "off_table"
    # the table's edge in view: one die of two found off
    truth = [TruthDie(1, (0, 0, 10, 10), off), TruthDie(2, (20, 0, 30, 10), off)]
    reading = Reading(100, 100, [_die(1, 0, on_table=False), _die(2, 20)])
    result.add(truth, reading, states_known=True, surface_in_view=True)
    # only the floor in view: three dice off, none found
    truth = [TruthDie(v, (20 * v, 0, 20 * v + 10, 10), off) for v in (3, 4, 5)]
    reading = Reading(100, 100, [_die(v, 20 * v) for v in (3, 4, 5)])
    result.add(truth, reading, states_known=True, surface_in_view=False)
    t = result.table
    assert (t.found_off, t.truth_off) == (1, 5)
    assert (t.unseen_found, t.unseen_off) == (0, 3) and t.recall_in_view == 0.5
    text = result.format()
    assert "off-table recall  20.00%  (1/5)" in text
    assert "surface in view 50.00%  (1/2); no surface in view (only the floor) 0/3" in text
    table = result.to_dict()["table"]
    assert table["recall_surface_in_view"] == 0.5
    assert table["no_surface_in_view"] == {"off_table_dice": 3, "found": 0}


def test_a_photo_not_known_to_show_the_surface_or_not_is_not_counted_as_showing_none():
    result = EvalResult()
    truth = [TruthDie(1, (0, 0, 10, 10), "off_table")]
    result.add(truth, Reading(100, 100, [_die(1, 0)]), states_known=True)  # surface_in_view None
    assert (result.table.truth_off, result.table.unseen_off) == (1, 0)


def test_no_split_line_when_every_photo_shows_the_surface():
    result = EvalResult()
    truth = [TruthDie(1, (0, 0, 10, 10), "off_table")]
    result.add(truth, Reading(100, 100, [_die(1, 0)]), states_known=True, surface_in_view=True)
    assert "surface in view" not in result.format()
    assert result.table.recall_in_view == result.table.recall == 0.0


def test_face_accuracy_by_die_size_counts_matched_dice_with_a_face():
    result = EvalResult()
    small, mid, big = (0, 0, 15, 12), (100, 0, 140, 25), (200, 0, 300, 90)  # 15, 40, 100 px
    result.add(
        [TruthDie(1, small), TruthDie(2, mid), TruthDie(3, big), TruthDie(None, (320, 0, 330, 9))],
        # the small die misread, the middle one read right, the big one misread, the cocked one
        # (no face to read) left out
        Reading(400, 400, [_die(4, 0), _die(2, 100), _die(5, 200), _die(6, 320, cocked=True)]),
    )
    assert result.faces_by_size == [[0, 1], [0, 0], [1, 1], [0, 0], [0, 1]]
    d = result.to_dict()["face_accuracy_by_size"]
    assert d["30-50 px"] == {"read_right": 1, "dice": 1} and d["80+ px"]["read_right"] == 0
    assert "faces by size     0-20 px 0/1  30-50 px 1/1  80+ px 0/1" in result.format()


def test_false_busts_short_only_of_dice_the_photo_does_not_show_are_told_apart():
    result = EvalResult()
    one = [TruthDie(2, (0, 0, 10, 10), "table")]
    # three rolled, one in view: short of two the photo does not show
    result.add(one, Reading(100, 100, [_die(2, 0)], expected_dice=3), states_known=True)
    # two rolled, both in view, one missed: the reader's own false bust
    two = [*one, TruthDie(4, (20, 0, 30, 10), "table")]
    result.add(two, Reading(100, 100, [_die(2, 0)], expected_dice=2), states_known=True)
    # three rolled, two in view, both missed: short of more than the photo hides
    result.add(two, Reading(100, 100, [], expected_dice=3), states_known=True)
    t = result.table
    assert t.false_busts == 3 and t.unseen_busts == 1 and t.clean_images == 3
    assert t.to_dict()["false_busts_unseen_dice"] == 1
    assert "unseen dice     1 of them short only of dice the photo does not show" in (
        result.format()
    )
    assert "; 2 the reader's own" in result.format()
    # three rolled, one in view, but that one called off the table: the reader's own, too
    result.add(
        one, Reading(100, 100, [_die(2, 0, on_table=False)], expected_dice=3), states_known=True
    )
    assert (t.false_busts, t.unseen_busts) == (4, 1)
