"""The reader's table step: the calibration or the learned outline, faint and doubted boxes
off the surface, the off-table die model, and the table step inside :class:`DiceReader` on a
tiny known-output detector."""

from __future__ import annotations

import numpy as np
import pytest

from vision.table import (
    LEARNED_TOLERANCE,
    OFF_MIN_DIE_CHECK,
    Calibration,
    TableStage,
)
from vision.types import Die, Reading

from dicecam_testing.table import LeftHalfOutline, table_and_floor

pytestmark = pytest.mark.usefixtures("table_settings")


def test_stage_default_uses_the_calibration_and_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("DICECAM_SURFACE_MODEL", "none")
    assert TableStage.default() is None  # no calibration, no model
    Calibration([(0, 0), (0.5, 0), (0.5, 1), (0, 1)]).save()
    stage = TableStage.default()
    assert stage is not None and stage.model is None
    assert stage.outline(None, 200, 100) == [(0, 0), (100, 0), (100, 100), (0, 100)]
    monkeypatch.setenv("DICECAM_TABLE", "0")
    assert TableStage.default() is None


def test_a_boundary_drawn_on_a_photo_of_another_shape_is_not_stretched_onto_it(tmp_path):
    """Drawn on a 4:3 photo, the boundary fits 4:3 frames of any size; a 16:9 or portrait frame
    gets the learned outline instead (stretched, the drawn one busted dice on the table)."""
    right_half = Calibration.from_pixels([(320, 0), (640, 0), (640, 480), (320, 480)], 640, 480)
    stage = TableStage(calibration=right_half, model=LeftHalfOutline())
    rgb = np.zeros((8, 8, 3), np.uint8)
    assert stage.outline(rgb, 1280, 960) == [(640, 0), (1280, 0), (1280, 960), (640, 960)]
    assert stage.outline(rgb, 1280, 720) == [(0, 0), (640, 0), (640, 720), (0, 720)]
    assert stage.outline(rgb, 480, 640) == [(0, 0), (240, 0), (240, 640), (0, 640)]
    die = Die(3, (100, 300, 140, 340), 0.9)  # in the left half: off the drawn boundary
    assert stage.apply(Reading(1280, 960, [die]), rgb).bust
    assert not stage.apply(Reading(1280, 720, [die]), rgb).bust
    loaded = Calibration.load(right_half.save(tmp_path / "cal.json"))
    assert loaded.aspect == pytest.approx(4 / 3, abs=1e-4) and not loaded.fits(1280, 720)
    assert Calibration([(0, 0), (0.5, 0), (0.5, 1)]).fits(1280, 720)  # files from before


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

    learned = TableStage(LeftHalfOutline())
    assert learned.learned_tolerance == LEARNED_TOLERANCE == 0.75
    assert off(learned) == [False, True]
    assert off(TableStage(calibration=half)) == [True, True]
    assert off(TableStage(LeftHalfOutline(), learned_tolerance=0.25)) == [True, True]
    monkeypatch.setenv("DICECAM_SURFACE_TOLERANCE", "1.5")
    assert off(TableStage(LeftHalfOutline())) == [False, False]
    assert "tolerance=1.5" in repr(TableStage(LeftHalfOutline()))
    with pytest.raises(ValueError, match="tolerances of 0 or more"):
        TableStage(LeftHalfOutline(), learned_tolerance=-1)


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
    stage = TableStage(LeftHalfOutline(), die_check=check)
    assert stage.min_die_check == OFF_MIN_DIE_CHECK == 0.7
    reading = stage.apply(Reading(640, 480, [Die(d.value, d.box, 0.9) for d in dice]), photo)
    assert [(d.value, d.on_table) for d in reading.dice] == [(1, True), (9, False)]
    assert check.asked == [400, 500] and reading.bust
    assert "min_die_check=0.7" in repr(stage)

    # the boxes are asked about in pixels of the photo as decoded (here at half size)
    half = table_and_floor(240, 320)
    check = FixedDieCheck({200: 2, 250: 9})
    TableStage(LeftHalfOutline(), die_check=check).apply(Reading(640, 480, list(dice)), half)
    assert check.asked == [200, 250]

    off = TableStage(LeftHalfOutline(), die_check=FixedDieCheck({}), min_die_check=0)
    assert len(off.apply(Reading(640, 480, list(dice)), photo).dice) == 3  # 0: none dropped
    monkeypatch.setenv("DICECAM_OFFTABLE_MIN_DIE_CHECK", "0.95")
    stage = TableStage(LeftHalfOutline(), die_check=FixedDieCheck({400: 2, 500: 9}))
    assert stage.min_die_check == 0.95
    assert [d.value for d in stage.apply(Reading(640, 480, list(dice)), photo).dice] == [1]
    with pytest.raises(ValueError, match="min_die_check"):
        TableStage(LeftHalfOutline(), min_die_check=1.5)


class SureOffModel:
    """Stands in for the off-table die model: every die is off, P(off) 0.9, from a crop 4 times
    its size."""

    threshold, context = 0.8, 4.0

    def __init__(self):
        self.asked = []  # the left edge of each box asked about

    def probability(self, rgb, boxes):
        self.asked += [int(b[0]) for b in boxes]
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

    def offs(model, asked=None):
        dice = [Die(d.value, d.box, 0.9) for d in (deep, near, outside)]
        die_model = SureOffModel()
        stage = TableStage(model, dice_model=die_model, min_die_check=0)
        flags = [not d.on_table for d in stage.apply(Reading(640, 480, dice), photo).dice]
        assert die_model.asked == asked  # not the die deep inside: its answer could not count
        return flags

    assert offs(LeftHalfOutline(), [260, 400]) == [False, True, True]
    assert offs(NoOutline(), [40, 260, 400]) == [True, True, True]


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
    monkeypatch.setenv("DICECAM_SURFACE_MODEL", "none")
    assert learned_outline() is None


def test_replace_keeps_every_setting_and_checks_the_new_ones():
    """The service swaps the surface of the reader's stage (its calibration) with ``replace``:
    every other setting stays as the stage had it."""
    check = FixedDieCheck({})
    stage = TableStage(
        LeftHalfOutline(),
        tolerance=0.4,
        learned_tolerance=1.25,
        dice_model=SureOffModel(),
        min_confidence=0.3,
        die_check=check,
        min_die_check=0.9,
        edge_contrast=7.5,
    )
    calibration = Calibration([(0, 0), (0.5, 0), (0.5, 1), (0, 1)])
    fixed = stage.replace(calibration=calibration, model=None)
    assert fixed is not stage and stage.calibration is None
    assert fixed.calibration is calibration and fixed.model is None
    assert fixed.dice_model is stage.dice_model and fixed.die_check is check
    assert (fixed.tolerance, fixed.learned_tolerance, fixed.min_confidence) == (0.4, 1.25, 0.3)
    assert (fixed.min_die_check, fixed.edge_contrast) == (0.9, 7.5)
    with pytest.raises(ValueError, match="min_die_check"):
        stage.replace(min_die_check=2.0)


def test_the_outline_source_says_learned_only_when_the_outline_model_read_the_photo():
    photo = table_and_floor()
    learned = TableStage(LeftHalfOutline())
    read = learned.apply(Reading(640, 480, [Die(3, (100, 200, 140, 240), 0.9)]), photo)
    assert read.outline_source == "learned" and read.outline is not None
    no_photo = learned.apply(Reading(640, 480, [Die(3, (100, 200, 140, 240), 0.9)]), None)
    assert no_photo.outline_source is None and no_photo.outline is None
    no_model = TableStage(None).apply(Reading(640, 480, []), photo)
    assert no_model.outline_source is None and no_model.outline is None
