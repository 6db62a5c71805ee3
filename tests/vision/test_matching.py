"""What vision.matching makes of synthetic sidecars and labels, at the limits it documents."""

from __future__ import annotations

from vision.matching import (
    CLEAR_MIN_CONTRAST,
    ROLLING,
    TruthDie,
    clear_die,
    face_legible,
    match_dice,
    table_state,
)
from vision.metrics import EvalResult
from vision.types import Die, Reading

SHARP = {"motion_blur_px": 0.0, "defocus_sigma": 0.5}
AT_REST = {"state": "table", "moving": False, "visible": 1.0}


def test_a_face_is_legible_from_the_contrast_limit_up_and_not_when_turned_away():
    assert face_legible({"face_contrast": CLEAR_MIN_CONTRAST}) is True
    assert face_legible({"face_contrast": CLEAR_MIN_CONTRAST - 0.01}) is False
    # None from the sidecar: the top face is turned away or out of the frame
    assert face_legible({"face_contrast": None}) is False
    assert clear_die({**AT_REST, "face_contrast": None}, SHARP) is False
    assert clear_die({**AT_REST, "face_contrast": CLEAR_MIN_CONTRAST}, SHARP) is True


def test_a_die_in_the_air_right_over_the_surfaces_edge_is_still_rolling():
    surface = {"table": [10.0, 8.0], "interior": None}
    assert table_state({"state": "in_air", "position": [10.0, 8.0, 3.0]}, surface) == ROLLING
    assert table_state({"state": "in_air", "position": [-10.0, -8.0, 3.0]}, surface) == ROLLING
    assert table_state({"state": "in_air", "position": [10.01, 0.0, 3.0]}, surface) == "in_air"


def test_an_odd_position_or_surface_leaves_a_die_in_the_air_off_the_table():
    surface = {"table": [10.0, 8.0], "interior": None}
    for die, surf in [
        ({"state": "in_air", "position": ["left", 0.0, 1.0]}, surface),  # not a number
        ({"state": "in_air", "position": [1.0, 0.0, 1.0]}, {"table": ["wide", 8.0]}),
        ({"state": "in_air", "position": [1.0]}, surface),  # too short
        ({"state": "in_air", "position": [1.0, 0.0, 1.0]}, {"interior": None}),  # no table
        ({"state": "in_air", "position": None}, surface),
    ]:
        assert table_state(die, surf) == "in_air", (die, surf)


def test_a_die_labelled_with_a_face_but_cocked_in_its_sidecar_counts_as_cocked():
    die = TruthDie(3, (0, 0, 10, 10), "cocked")
    assert die.cocked and die.on_table is True
    result = EvalResult()
    # read as a flat 3: the cocked die is found, not flagged, and no face is scored
    result.add([die], Reading(100, 100, [Die(3, (1, 1, 9, 9), 0.9)]))
    assert (result.truth_cocked, result.found_cocked, result.flagged_cocked) == (1, 1, 0)
    assert result.face_matched == 0 and result.exact_images == 0


def test_a_centre_on_a_box_edge_counts_as_inside():
    # the prediction's centre (10, 5) lies on the true box's right edge; the true centre (5, 5)
    # is outside the prediction: they match through the edge alone
    assert match_dice([(0, 0, 10, 10)], [(8, 4, 12, 6)]) == [(0, 0)]
    # the true centre (5, 5) on the prediction's top-left corner, its centre outside the truth
    assert match_dice([(0, 0, 10, 10)], [(5, 5, 25, 25)]) == [(0, 0)]
    assert match_dice([(0, 0, 10, 10)], [(5.01, 5.01, 25, 25)]) == []


def test_pairs_come_in_the_order_of_the_true_dice_not_of_their_distance():
    truth = [(0, 0, 10, 10), (20, 0, 30, 10)]
    # truth 1 sits right on prediction 0 (distance 0), truth 0 is 1 px off prediction 1: the
    # pair of truth 1 is made first, yet the pairs come sorted by true die
    predicted = [(20, 0, 30, 10), (1, 0, 11, 10)]
    assert match_dice(truth, predicted) == [(0, 1), (1, 0)]


def test_a_sidecar_that_does_not_say_how_much_of_a_die_shows_leaves_it_unknown():
    # older sets: no "visible", no "moving", or no scene.post: neither clear nor unclear
    assert clear_die({"state": "table", "moving": False}, SHARP) is None
    assert clear_die({"state": "table", "visible": 1.0}, SHARP) is None
    assert clear_die(AT_REST, None) is None
