"""The off-table die model at run time: a tiny ONNX model whose P(off) is the brightness around
the die, so each test knows which dice must be called off the surface."""

from __future__ import annotations

import numpy as np
import pytest

from vision.table import (
    Calibration,
    OffTableModel,
    TableStage,
    context_crop,
)
from vision.types import Die, Reading

pytest.importorskip("onnx", reason="the onnx package builds the test model")
from dicecam_testing.onnx_models import bright_is_off  # noqa: E402


@pytest.fixture
def photo() -> np.ndarray:
    """640x480: dark on the left half, bright on the right half."""
    rgb = np.full((480, 640, 3), 30, np.uint8)
    rgb[:, 320:] = 230
    return rgb


def _reading() -> Reading:
    return Reading(640, 480, [Die(2, (100, 200, 120, 220), 0.9), Die(5, (500, 200, 520, 220), 0.9)])


def test_probability_of_each_die_from_its_surroundings(tmp_path, photo):
    model = OffTableModel(bright_is_off(tmp_path / "m.onnx"))
    p = model.probability(photo, [(100, 200, 120, 220), (500, 200, 520, 220)])
    assert p.shape == (2,) and p[0] < 0.01 and p[1] > 0.99
    assert model.probability(photo, []).shape == (0,)
    assert context_crop(photo, (100, 200, 120, 220)).shape == (48, 48, 3)


def test_stage_calls_off_what_the_die_model_says_even_inside_the_outline(tmp_path, photo):
    stage = TableStage(None, dice_model=OffTableModel(bright_is_off(tmp_path / "m.onnx")))
    reading = stage.apply(_reading(), photo)
    assert reading.outline is None  # no outline model: the surface fills the frame
    assert [d.on_table for d in reading.dice] == [True, False]
    assert reading.off_table == 1 and reading.bust
    assert "dice_model=OffTableModel" in repr(stage)


def test_die_boxes_are_scaled_to_a_photo_decoded_smaller(tmp_path, photo):
    stage = TableStage(None, dice_model=OffTableModel(bright_is_off(tmp_path / "m.onnx")))
    half = np.ascontiguousarray(photo[::2, ::2])  # 320x240 pixels for a 640x480 reading
    reading = stage.apply(_reading(), half)
    assert [d.on_table for d in reading.dice] == [True, False]


def test_a_calibrated_boundary_is_not_overruled_by_the_die_model(tmp_path, photo):
    whole = Calibration([(0, 0), (1, 0), (1, 1), (0, 1)])
    dice_model = OffTableModel(bright_is_off(tmp_path / "m.onnx"))
    reading = TableStage(calibration=whole, dice_model=dice_model).apply(_reading(), photo)
    assert [d.on_table for d in reading.dice] == [True, True]


def test_default_stage_loads_the_die_model_from_settings(tmp_path, monkeypatch, table_settings):
    surface = tmp_path / "surface.onnx"
    from vision.table import DEFAULT_SURFACE_MODEL

    if not DEFAULT_SURFACE_MODEL.is_file():
        pytest.skip(f"surface model not built: {DEFAULT_SURFACE_MODEL}")
    surface.write_bytes(DEFAULT_SURFACE_MODEL.read_bytes())
    monkeypatch.setenv("DICECAM_SURFACE_MODEL", str(surface))
    monkeypatch.setenv("DICECAM_OFFTABLE_MODEL", str(bright_is_off(tmp_path / "m.onnx")))
    monkeypatch.setenv("DICECAM_OFFTABLE_THRESHOLD", "0.8")
    stage = TableStage.default()
    assert stage.dice_model is not None and stage.dice_model.threshold == 0.8
    monkeypatch.setenv("DICECAM_OFFTABLE_MODEL", "none")
    assert TableStage.default().dice_model is None  # none: no die model


def test_bad_models_and_thresholds_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="off-table model not found"):
        OffTableModel(tmp_path / "missing.onnx")
    with pytest.raises(ValueError, match="expected 2 classes"):
        OffTableModel(bright_is_off(tmp_path / "three.onnx", classes=3))
    with pytest.raises(ValueError, match="expected 0 < threshold < 1, got 1.5"):
        OffTableModel(bright_is_off(tmp_path / "m.onnx"), threshold=1.5)


def test_a_calibration_without_an_outline_model_loads_no_die_model(
    tmp_path, monkeypatch, table_settings, photo
):
    """The die model judges dice beside a learned outline; with only a calibration it is not
    loaded, so a photo of another shape than the calibration's (no outline at all) busts no die
    it would call off."""
    monkeypatch.setenv("DICECAM_SURFACE_MODEL", "none")
    monkeypatch.setenv("DICECAM_OFFTABLE_MODEL", str(bright_is_off(tmp_path / "m.onnx")))
    square = [(0, 0), (480, 0), (480, 480), (0, 480)]
    Calibration.from_pixels(square, 480, 480).save()  # drawn on a square photo
    stage = TableStage.default()
    assert stage is not None and stage.calibration is not None and stage.dice_model is None
    reading = stage.apply(_reading(), photo)  # 640x480: the calibration does not fit
    assert reading.outline is None and not reading.bust
