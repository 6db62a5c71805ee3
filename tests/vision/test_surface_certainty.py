"""An outline model that is unsure of its grid gives no outline, so it busts no roll: the gate
comes from the model's metadata, the constructor or ``DICECAM_SURFACE_MIN_CERTAINTY``."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vision.table import SurfaceModel, SurfaceModelError, TableStage, surface_certainty
from vision.types import Die, Reading


def test_certainty_is_one_for_a_sure_grid_and_zero_for_an_undecided_one():
    assert surface_certainty(np.array([[0.0, 1.0], [1.0, 0.0]])) == 1.0
    assert surface_certainty(np.full((4, 4), 0.5)) == 0.0
    assert surface_certainty(np.array([[0.6, 0.4]])) == pytest.approx(0.2)
    assert surface_certainty(np.zeros((0, 0))) == 0.0


def _half_sure_model(path, metadata: dict[str, str] | None = None) -> None:
    """A surface model that reads red cells as surface with p = 0.6 and the rest with p = 0.4
    (a 4x4 convolution on a 32 px input, so an 8x8 grid)."""
    torch = pytest.importorskip("torch", reason="torch exports the test model")
    onnx = pytest.importorskip("onnx", reason="onnx writes the test model's metadata")
    conv = torch.nn.Conv2d(3, 1, 4, 4)
    logit = lambda p: math.log(p / (1 - p))  # noqa: E731
    with torch.no_grad():
        conv.weight.zero_()
        conv.weight[0, 0] = (logit(0.6) - logit(0.4)) / 16  # a 4x4 patch of red 1.0
        conv.bias.fill_(logit(0.4))
    net = torch.nn.Sequential(conv, torch.nn.Sigmoid())
    torch.onnx.export(
        net, torch.zeros(1, 3, 32, 32), str(path), input_names=["image"],
        output_names=["surface"], dynamic_axes={"image": {0: "b"}}, dynamo=False,
    )  # fmt: skip
    model = onnx.load(str(path))
    for key, value in (metadata or {}).items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.save(model, str(path))


def _left_half_red() -> np.ndarray:
    rgb = np.zeros((240, 320, 3), np.uint8)
    rgb[:, :160, 0] = 255
    return rgb


def test_an_unsure_grid_gives_no_outline_from_the_threshold_asked(tmp_path):
    path = tmp_path / "unsure.onnx"
    _half_sure_model(path)
    rgb = _left_half_red()
    plain = SurfaceModel(path)
    assert plain.min_certainty == 0.0
    assert surface_certainty(plain.probability(rgb)) == pytest.approx(0.2, abs=0.01)
    outline = plain.outline(rgb)
    assert outline is not None and max(x for x, _ in outline) <= 170  # the left half
    gated = SurfaceModel(path, min_certainty=0.3)
    assert gated.outline(rgb) is None and "min_certainty=0.3" in repr(gated)
    assert SurfaceModel(path, min_certainty=0.1).outline(rgb) == outline
    # with no outline a die on the right half is on the table: no bust
    reading = Reading(320, 240, [Die(3, (250, 100, 270, 120), 0.9)])
    assert TableStage(gated).apply(reading, rgb).bust is False
    reading = Reading(320, 240, [Die(3, (250, 100, 270, 120), 0.9)])
    assert TableStage(plain).apply(reading, rgb).bust is True
    with pytest.raises(ValueError, match="expected 0 <= min_certainty < 1, got 1.5"):
        SurfaceModel(path, min_certainty=1.5)


def test_the_gate_comes_from_the_model_and_the_setting_overrides_it(
    tmp_path, monkeypatch, table_settings
):
    path = tmp_path / "stamped.onnx"
    _half_sure_model(path, {"min_certainty": "0.3"})
    rgb = _left_half_red()
    assert SurfaceModel(path).min_certainty == 0.3
    assert SurfaceModel(path).outline(rgb) is None
    monkeypatch.setenv("DICECAM_OFFTABLE_MODEL", "none")
    monkeypatch.setenv("DICECAM_SURFACE_MODEL", str(path))
    assert TableStage.default().model.min_certainty == 0.3
    monkeypatch.setenv("DICECAM_SURFACE_MIN_CERTAINTY", "0.1")
    stage = TableStage.default()
    assert stage.model.min_certainty == 0.1 and stage.outline(rgb, 320, 240) is not None


def test_a_gate_in_the_metadata_that_is_not_a_number_is_named(tmp_path):
    path = tmp_path / "odd.onnx"
    _half_sure_model(path, {"min_certainty": "high"})
    with pytest.raises(
        SurfaceModelError, match="expected a number in its min_certainty metadata, got 'high'"
    ):
        SurfaceModel(path)
    assert SurfaceModel(path, min_certainty=0.2).min_certainty == 0.2


def test_a_speck_of_surface_is_no_outline(tmp_path):
    # the shipped model, shown a plain grey photo, found "surface" in one corner only and put
    # every die off the table: a region under min_area of the frame now gives no outline
    path = tmp_path / "speck.onnx"
    _half_sure_model(path)
    rgb = np.zeros((240, 320, 3), np.uint8)
    rgb[:30, :40, 0] = 255  # one cell of the 8x8 grid (1.6% of the frame)
    reading = Reading(320, 240, [Die(3, (150, 100, 170, 120), 0.9)])
    assert SurfaceModel(path).min_area == 0.03
    assert SurfaceModel(path).outline(rgb) is None
    assert TableStage(SurfaceModel(path)).apply(reading, rgb).bust is False
    speck = SurfaceModel(path, min_area=0.0).outline(rgb)
    assert speck is not None and max(x for x, _ in speck) <= 60
    assert TableStage(SurfaceModel(path, min_area=0.0)).apply(reading, rgb).bust is True
    rgb[:120, :160, 0] = 255  # a quarter of the frame is a surface
    assert SurfaceModel(path).outline(rgb) is not None
    with pytest.raises(ValueError, match="expected 0 <= min_area < 1, got 1"):
        SurfaceModel(path, min_area=1)
