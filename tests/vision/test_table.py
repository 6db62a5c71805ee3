"""Table logic: polygons and masks, which dice rest on the surface, calibration storage, and the
reader's table step on a tiny known-output detector."""

from __future__ import annotations

import json

import numpy as np
import pytest

from vision.table import (
    LEARNED_TOLERANCE,
    OFF_MIN_DIE_CHECK,
    Calibration,
    CalibrationError,
    TableStage,
    apply_table,
    calibration_path,
    die_on_table,
    mask_to_outline,
    outline_mask,
    resting_point,
)
from vision.types import Die, Reading

SQUARE = [(100.0, 100.0), (500.0, 100.0), (500.0, 400.0), (100.0, 400.0)]


@pytest.fixture(autouse=True)
def _isolated_settings(tmp_path, monkeypatch):
    """No user calibration or data folder leaks into these tests."""
    monkeypatch.setenv("DICECAM_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("DICECAM_CALIBRATION", raising=False)
    monkeypatch.delenv("DICECAM_TABLE", raising=False)
    monkeypatch.delenv("DICECAM_SURFACE_MODEL", raising=False)


def table_and_floor(height: int = 480, width: int = 640) -> np.ndarray:
    """A photo whose left half is a grey table and right half a brown floor: the edge that
    :class:`FixedOutline` draws shows in it (:mod:`vision.table.edges`)."""
    photo = np.full((height, width, 3), 150, np.uint8)
    photo[:, width // 2 :] = (110, 70, 40)
    return photo


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


# -- the reader's table step ------------------------------------------------------------------


def test_stage_default_uses_the_calibration_and_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("DICECAM_SURFACE_MODEL", "/nonexistent/surface.onnx")
    assert TableStage.default() is None  # no calibration, no model
    Calibration([(0, 0), (0.5, 0), (0.5, 1), (0, 1)]).save()
    stage = TableStage.default()
    assert stage is not None and stage.model is None
    assert stage.outline(None, 200, 100) == [(0, 0), (100, 0), (100, 100), (0, 100)]
    monkeypatch.setenv("DICECAM_TABLE", "0")
    assert TableStage.default() is None


def test_faint_boxes_off_the_surface_are_dropped_and_confident_ones_bust():
    calibration = Calibration([(0, 0), (0.5, 0), (0.5, 1), (0, 1)])  # left half of 640x480
    dice = [
        Die(5, (100, 200, 140, 240), 0.3),  # on the surface, faint: kept
        Die(2, (400, 200, 440, 240), 0.35),  # off, faint: not a die to bust on
        Die(6, (500, 200, 540, 240), 0.7),  # off, confident: a bust
    ]
    reading = TableStage(calibration=calibration, min_confidence=0.5).apply(
        Reading(640, 480, list(dice)), None
    )
    assert [(d.value, d.on_table) for d in reading.dice] == [(5, True), (6, False)]
    assert reading.off_table == 1 and reading.bust

    faint_only = TableStage(calibration=calibration, min_confidence=0.5).apply(
        Reading(640, 480, dice[:2]), None
    )
    assert [d.value for d in faint_only.dice] == [5] and not faint_only.bust
    faint_only.expected_dice = 2  # the caller rolled two: the dropped one is missing, a bust
    assert faint_only.missing == 1 and faint_only.bust

    kept = TableStage(calibration=calibration).apply(Reading(640, 480, list(dice)), None)
    assert kept.off_table == 2  # min_confidence 0 drops nothing
    with pytest.raises(ValueError, match="expected 0 <= min_confidence <= 1, got -0.1"):
        TableStage(calibration=calibration, min_confidence=-0.1)
    assert "min_confidence=0.5" in repr(TableStage(calibration=calibration, min_confidence=0.5))


def test_stage_default_takes_the_minimum_confidence_off_the_surface_from_settings(monkeypatch):
    Calibration([(0, 0), (0.5, 0), (0.5, 1), (0, 1)]).save()
    assert TableStage.default().min_confidence == 0.0
    monkeypatch.setenv("DICECAM_OFFTABLE_MIN_CONF", "0.45")
    assert TableStage.default().min_confidence == 0.45
    monkeypatch.setenv("DICECAM_OFFTABLE_MIN_CONF", "1.5")
    with pytest.raises(ValueError, match="offtable_min_conf"):
        TableStage.default()


class FixedOutline:
    """Stands in for the outline model: always the left half of the photo."""

    def outline(self, rgb, size, boxes=()):
        w, h = size
        return [(0, 0), (w / 2, 0), (w / 2, h), (0, h)]


def test_the_learned_outline_gets_more_slack_than_a_drawn_boundary(monkeypatch):
    """A die resting half a die past the edge is on a learned outline (its grid is about a die
    coarse) and off a calibration, which the user drew where the edge is."""
    half = Calibration([(0, 0), (0.5, 0), (0.5, 1), (0, 1)])  # the left half of 640x480
    near = Die(3, (320, 200, 360, 240), 0.9)  # resting at x=340: half a die past x=320
    far = Die(4, (340, 200, 380, 240), 0.9)  # resting a whole die past it

    photo = table_and_floor()  # the outline model reads a photo

    def off(stage):
        reading = stage.apply(
            Reading(640, 480, [Die(3, near.box, 0.9), Die(4, far.box, 0.9)]), photo
        )
        return [not d.on_table for d in reading.dice]

    learned = TableStage(FixedOutline())
    assert learned.learned_tolerance == LEARNED_TOLERANCE == 0.75
    assert off(learned) == [False, True]
    assert off(TableStage(calibration=half)) == [True, True]
    assert off(TableStage(FixedOutline(), learned_tolerance=0.25)) == [True, True]
    monkeypatch.setenv("DICECAM_SURFACE_TOLERANCE", "1.5")
    assert off(TableStage(FixedOutline())) == [False, False]
    assert "tolerance=1.5" in repr(TableStage(FixedOutline()))
    with pytest.raises(ValueError, match="tolerances of 0 or more"):
        TableStage(FixedOutline(), learned_tolerance=-1)


class FixedDieCheck:
    """Stands in for the die check: a box's probability of being a die is its die's value / 10
    (boxes found by their left edge), and it remembers which boxes it was asked about."""

    def __init__(self, values_by_x1):
        self.values_by_x1, self.asked = values_by_x1, []

    def probability(self, rgb, boxes):
        self.asked += [round(b[0]) for b in boxes]
        return np.array([self.values_by_x1[round(b[0])] / 10 for b in boxes])


def test_a_box_off_the_surface_that_the_die_check_doubts_is_dropped_not_a_bust(monkeypatch):
    photo = table_and_floor()
    dice = [
        Die(1, (100, 200, 140, 240), 0.9),  # on the surface, doubted: not asked, kept
        Die(2, (400, 200, 440, 240), 0.9),  # off, doubted (0.2): a prop, dropped
        Die(9, (500, 200, 540, 240), 0.9),  # off, sure (0.9): a die off the table, a bust
    ]
    check = FixedDieCheck({100: 1, 400: 2, 500: 9})
    stage = TableStage(FixedOutline(), die_check=check)
    assert stage.min_die_check == OFF_MIN_DIE_CHECK == 0.7
    reading = stage.apply(Reading(640, 480, [Die(d.value, d.box, 0.9) for d in dice]), photo)
    assert [(d.value, d.on_table) for d in reading.dice] == [(1, True), (9, False)]
    assert check.asked == [400, 500] and reading.bust
    assert "min_die_check=0.7" in repr(stage)

    # the boxes are asked about in pixels of the photo as decoded (here at half size)
    half = table_and_floor(240, 320)
    check = FixedDieCheck({200: 2, 250: 9})
    TableStage(FixedOutline(), die_check=check).apply(Reading(640, 480, list(dice)), half)
    assert check.asked == [200, 250]

    off = TableStage(FixedOutline(), die_check=FixedDieCheck({}), min_die_check=0)
    assert len(off.apply(Reading(640, 480, list(dice)), photo).dice) == 3  # 0: none dropped
    monkeypatch.setenv("DICECAM_OFFTABLE_MIN_DIE_CHECK", "0.95")
    stage = TableStage(FixedOutline(), die_check=FixedDieCheck({400: 2, 500: 9}))
    assert stage.min_die_check == 0.95
    assert [d.value for d in stage.apply(Reading(640, 480, list(dice)), photo).dice] == [1]
    with pytest.raises(ValueError, match="min_die_check"):
        TableStage(FixedOutline(), min_die_check=1.5)


class SureOffModel:
    """Stands in for the off-table die model: every die is off, P(off) 0.9, from a crop 4 times
    its size."""

    threshold, context = 0.8, 4.0

    def probability(self, rgb, boxes):
        return np.full(len(boxes), 0.9)


class NoOutline:
    def outline(self, rgb, size, boxes=()):
        return None  # the surface fills the frame, or the model is unsure of its grid


def test_the_off_table_die_model_judges_dice_its_crop_shows_an_edge_for():
    """A die deep inside the learned outline stays on: the die model's crop (4 die sizes) shows
    it no edge there. Near the edge, or with no outline to measure from, the die model rules."""
    photo = table_and_floor()
    deep = Die(1, (40, 200, 80, 240), 0.9)  # resting 6.5 die sizes inside the left half
    near = Die(2, (260, 200, 300, 240), 0.9)  # 1 die size inside: within the crop's reach
    outside = Die(3, (400, 200, 440, 240), 0.9)

    def offs(model):
        dice = [Die(d.value, d.box, 0.9) for d in (deep, near, outside)]
        stage = TableStage(model, dice_model=SureOffModel(), min_die_check=0)
        return [not d.on_table for d in stage.apply(Reading(640, 480, dice), photo).dice]

    assert offs(FixedOutline()) == [False, True, True]
    assert offs(NoOutline()) == [True, True, True]


def _reader_models():
    pytest.importorskip("onnx", reason="the onnx package builds the test detector")
    from dicecam_testing import onnx_models

    return onnx_models


def test_reader_marks_a_die_outside_the_calibrated_boundary_off_the_table(tmp_path):
    from vision import DiceReader

    models = _reader_models()
    # two dice in a 320x320 input: a 5 on the left, a 2 on the right
    path = models.make_model(
        tmp_path / "two.onnx",
        models.raw_preds([(80, 160, 30, 30, {4: 0.9}), (260, 160, 30, 30, {1: 0.9})]),
    )
    Calibration([(0, 0), (0.5, 0), (0.5, 1), (0, 1)]).save()  # left half of the frame
    reader = DiceReader(path, faces=False)
    assert reader.table is not None and reader.table.calibration is not None
    reading = reader.read(np.zeros((640, 640, 3), np.uint8))
    assert [(d.value, d.on_table) for d in reading.dice] == [(5, True), (2, False)]
    assert reading.off_table == 1 and reading.bust and reading.values == [5]
    assert reading.to_dict()["outline"] == [[0, 0], [320, 0], [320, 640], [0, 640]]

    plain = DiceReader(path, faces=False, table=None).read(np.zeros((640, 640, 3), np.uint8))
    assert plain.off_table == 0 and plain.outline is None


def test_missing_dice_can_be_left_to_the_player_instead_of_busting():
    reading = Reading(640, 480, [Die(5, (200, 200, 240, 240), 0.9)], expected_dice=2)
    reading.missing_is_bust = False
    apply_table(reading, SQUARE)
    d = reading.to_dict()
    assert d["missing"] == 1 and d["bust"] is False and d["off_table"] == 0
    reading.dice.append(Die(2, (560, 420, 600, 460), 0.9))
    apply_table(reading, SQUARE)  # now both dice are seen, one off the table: a bust again
    assert reading.missing == 0 and reading.bust


def test_learned_outline_takes_its_model_and_certainty_gate_from_the_settings(
    monkeypatch, tmp_path
):
    from vision.table import DEFAULT_SURFACE_MODEL, learned_outline

    if not DEFAULT_SURFACE_MODEL.is_file():
        pytest.skip(f"no shipped outline model at {DEFAULT_SURFACE_MODEL}")
    shipped = learned_outline()
    assert shipped is not None and shipped.min_certainty == 0.4  # the model's own metadata
    monkeypatch.setenv("DICECAM_SURFACE_MIN_CERTAINTY", "0.7")
    assert learned_outline().min_certainty == 0.7
    monkeypatch.setenv("DICECAM_SURFACE_MODEL", str(tmp_path / "none.onnx"))
    assert learned_outline() is None
