"""Table logic: polygons and masks, which dice rest on the surface, the roll's bust, and
calibration storage."""

from __future__ import annotations

import json

import numpy as np
import pytest

from vision.table import (
    Calibration,
    CalibrationError,
    apply_table,
    calibration_path,
    die_on_table,
    mask_to_outline,
    outline_mask,
    resting_point,
)
from vision.types import Die, Reading

pytestmark = pytest.mark.usefixtures("table_settings")

SQUARE = [(100.0, 100.0), (500.0, 100.0), (500.0, 400.0), (100.0, 400.0)]


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    return float((a & b).sum() / (a | b).sum())


# -- geometry ---------------------------------------------------------------------------------


def test_outline_mask_none_is_whole_frame_and_empty_is_nothing():
    assert outline_mask(None, 64, 48).all()
    assert not outline_mask([], 64, 48).any()
    mask = outline_mask(SQUARE, 640, 480)
    assert mask.shape == (480, 640)
    assert abs(int(mask.sum()) - 400 * 300) < 0.01 * 400 * 300
    assert mask[250, 300] == 1 and mask[50, 50] == 0 and mask[450, 600] == 0


def test_outline_mask_at_another_resolution_scales_the_polygon():
    small = outline_mask(SQUARE, 640, 480, (48, 64))
    assert small.shape == (48, 64)
    assert small[25, 30] == 1 and small[5, 5] == 0 and small[45, 60] == 0


def test_mask_to_outline_recovers_a_quadrilateral_in_photo_pixels():
    quad = [(80.0, 60.0), (560.0, 90.0), (600.0, 470.0), (30.0, 430.0)]
    prob = outline_mask(quad, 640, 480, (96, 128)).astype(np.float32)
    outline = mask_to_outline(prob, 640, 480)
    assert outline is not None and 4 <= len(outline) <= 6
    assert _iou(outline_mask(outline, 640, 480), outline_mask(quad, 640, 480).astype(bool)) > 0.95


def test_mask_to_outline_convex_fills_a_notch_the_plain_outline_keeps():
    quad = [(80.0, 60.0), (560.0, 90.0), (600.0, 470.0), (30.0, 430.0)]
    prob = outline_mask(quad, 640, 480, (96, 128)).astype(np.float32)
    prob[40:56, 106:118] = 0.0  # a pale die at the right edge read as not-surface
    die = (535.0, 215.0, 570.0, 255.0)
    plain = mask_to_outline(prob, 640, 480)
    convex = mask_to_outline(prob, 640, 480, convex=True)
    assert not die_on_table(die, plain)
    assert die_on_table(die, convex)
    true_mask = outline_mask(quad, 640, 480).astype(bool)
    assert _iou(outline_mask(convex, 640, 480), true_mask) > 0.95


def test_mask_to_outline_full_frame_is_none_and_empty_is_empty():
    assert mask_to_outline(np.ones((32, 32), np.float32), 640, 480) is None
    assert mask_to_outline(np.zeros((32, 32), np.float32), 640, 480) == []
    with pytest.raises(ValueError, match="expected a 2-D probability map"):
        mask_to_outline(np.ones((2, 3, 4)), 10, 10)


def test_mask_to_outline_keeps_the_largest_region_and_reaches_the_frame_edge():
    prob = np.zeros((40, 40), np.float32)
    prob[:, 10:] = 0.9  # the surface: right 3/4 of the frame, touching three edges
    prob[2:5, 2:5] = 0.9  # a speck of "surface" elsewhere
    outline = mask_to_outline(prob, 400, 400)
    xs, ys = [p[0] for p in outline], [p[1] for p in outline]
    assert min(xs) == pytest.approx(100, abs=6) and max(xs) == 400
    assert min(ys) == 0 and max(ys) == 400


def test_mask_to_outline_takes_a_lone_speck_for_no_surface_under_min_area():
    prob = np.zeros((40, 40), np.float32)
    prob[36:, 36:] = 0.9  # 16 of 1600 cells, in a corner: 1% of the frame
    speck = mask_to_outline(prob, 400, 400)
    assert speck and max(p[0] for p in speck) == 400  # an outline by default
    assert mask_to_outline(prob, 400, 400, min_area=0.03) == []
    prob[20:, 20:] = 0.9  # a quarter of the frame is well over 3%
    assert mask_to_outline(prob, 400, 400, min_area=0.03)


def test_resting_point_is_the_lower_part_of_the_box():
    assert resting_point((0, 0, 10, 20)) == (5.0, 12.0)
    assert resting_point((0, 0, 10, 20), lift=0.0) == (5.0, 20.0)


# -- which dice are on the table --------------------------------------------------------------


def test_dice_inside_outside_and_on_the_rim():
    inside = (200, 200, 240, 240)
    outside = (550, 200, 590, 240)  # 50 px beyond the right edge
    rim = (480, 200, 520, 240)  # centre 20 px... resting point x = 500, on the edge
    just_out = (505, 200, 545, 240)  # resting point 25 px out: more than 0.25 of a 40 px die
    assert die_on_table(inside, SQUARE)
    assert not die_on_table(outside, SQUARE)
    assert die_on_table(rim, SQUARE)
    assert not die_on_table(just_out, SQUARE)
    assert die_on_table(just_out, SQUARE, tolerance=1.0)


def test_the_tolerance_is_a_share_of_the_boxs_shorter_side():
    """A tall box (a die seen from a low camera) gets slack by its width, not its height."""
    tall = (495, 200, 535, 280)  # 40 x 80, resting point 15 px past x=500
    assert not die_on_table(tall, SQUARE)  # 15 px > 0.25 * 40
    wide = (480, 240, 560, 280)  # 80 x 40, resting point 20 px past x=500
    assert not die_on_table(wide, SQUARE)  # 20 px > 0.25 * 40 (its height)
    assert die_on_table(tall, SQUARE, tolerance=0.4)  # 15 px <= 0.4 * 40


def test_no_outline_means_every_die_is_on_and_an_empty_one_that_none_is():
    box = (900, 900, 940, 940)
    assert die_on_table(box, None)
    assert not die_on_table(box, [])


def test_apply_table_sets_on_table_outline_and_the_bust():
    reading = Reading(
        640,
        480,
        [Die(5, (200, 200, 240, 240), 0.9), Die(1, (560, 420, 600, 460), 0.8, cocked=False)],
    )
    out = apply_table(reading, SQUARE)
    assert out is reading
    assert [d.on_table for d in reading.dice] == [True, False]
    assert reading.off_table == 1 and reading.bust and reading.values == [5]
    d = reading.to_dict()
    assert d["off_table"] == 1 and d["bust"] is True and d["outline"][1] == [500.0, 100.0]
    assert d["dice"][1]["on_table"] is False

    apply_table(reading, None)
    assert reading.off_table == 0 and not reading.bust and reading.outline is None


def test_missing_dice_are_a_bust_and_cocked_dice_are_counted_but_not_scored():
    reading = Reading(
        640,
        480,
        [Die(5, (200, 200, 240, 240), 0.9), Die(3, (300, 200, 340, 240), 0.7, cocked=True)],
    )
    reading.expected_dice = 3
    apply_table(reading, SQUARE)
    assert reading.off_table == 0 and reading.missing == 1 and reading.bust
    assert reading.cocked == 1 and reading.values == [5]


def test_missing_dice_can_be_left_to_the_player_instead_of_busting():
    reading = Reading(640, 480, [Die(5, (200, 200, 240, 240), 0.9)], expected_dice=2)
    reading.missing_is_bust = False
    apply_table(reading, SQUARE)
    d = reading.to_dict()
    assert d["missing"] == 1 and d["bust"] is False and d["off_table"] == 0
    reading.dice.append(Die(2, (560, 420, 600, 460), 0.9))
    apply_table(reading, SQUARE)  # now both dice are seen, one off the table: a bust again
    assert reading.missing == 0 and reading.bust


# -- calibration ------------------------------------------------------------------------------


def test_calibration_round_trip_in_the_data_dir(tmp_path):
    cal = Calibration.from_pixels(SQUARE, 640, 480, image="cam.jpg")
    path = cal.save()
    assert path == tmp_path / "data" / "calibration.json" == calibration_path()
    data = json.loads(path.read_text())
    assert data["format"] == 1 and data["points"][0] == [0.15625, 0.20833]
    back = Calibration.load()
    assert back is not None and back.image == "cam.jpg"
    assert np.allclose(back.outline(640, 480), SQUARE, atol=0.1)
    assert back.outline(1280, 960)[2] == pytest.approx((1000, 800), abs=0.1)
    assert [p.name for p in path.parent.iterdir()] == ["calibration.json"]  # no temp file left
    assert Calibration.clear() and Calibration.load() is None and not Calibration.clear()


def test_dicecam_calibration_env_chooses_the_file(tmp_path, monkeypatch):
    target = tmp_path / "elsewhere" / "cal.json"
    monkeypatch.setenv("DICECAM_CALIBRATION", str(target))
    Calibration([(0, 0), (1, 0), (1, 1)]).save()
    assert target.is_file() and calibration_path() == target


@pytest.mark.parametrize(
    ("points", "message"),
    [
        ([(0, 0), (1, 1)], "at least 3 boundary points"),
        ([(0, 0), (0.5, 0.5), (1, 1)], "enclosing some of the photo"),
        ([(0, 0), (5, 0), (0, 1)], "normalised coordinates near 0..1"),
    ],
)
def test_bad_calibration_polygons_say_what_was_expected(points, message):
    with pytest.raises(CalibrationError, match=message):
        Calibration(points)


def test_broken_calibration_file_is_an_error_that_names_it_and_is_left_alone(tmp_path):
    path = calibration_path()
    path.parent.mkdir(parents=True)
    for text in (
        "{not json",
        '{"corners": []}',
        '{"points": [[0, 0], [1, 1]]}',
        '{"points": ["ab", [1, 0], [0, 1]]}',  # "ab" was a bare ValueError
        '{"points": [[NaN, 0], [1, 0], [0, 1]]}',
        '{"points": [3, [1, 0], [0, 1]]}',
    ):
        path.write_text(text)
        with pytest.raises(CalibrationError, match=str(path).replace("\\", "\\\\")):
            Calibration.load()
        assert path.read_text() == text
