"""The surface model's layers (off, table, tray): the table outline each sidecar carries or is
rebuilt from its scene, the layer targets built from it, and the rule that picks the tray over
the table; a single-layer model of older releases still loads."""

from __future__ import annotations

import numpy as np
import pytest

from vision.synth import make_sample
from vision.synth.labels import surface_outlines
from vision.table import LAYERS, SurfaceModel, SurfaceModelError, outline_mask, play_surface

# seed 7 at 640x480: index 8 is a tray on a table, both in view, a die beside the tray
TRAY = (7, 8)


@pytest.fixture(scope="module")
def tray_sample():
    s = make_sample(*TRAY, 640, 480)
    assert s.meta["surface_kind"] == "tray" and s.meta["outline"], "expected a tray in view"
    return s


def _area(outline) -> int:
    return int(outline_mask(outline, 640, 480).sum())


def test_tray_sidecar_carries_the_table_around_the_tray(tray_sample):
    table, play = surface_outlines(tray_sample.meta)
    assert play == tray_sample.meta["outline"]
    assert table == tray_sample.meta["table_outline"]
    inside = outline_mask(play, 640, 480).astype(bool)
    on_table = outline_mask(table, 640, 480).astype(bool)
    assert _area(table) > 2 * _area(play)  # the table spreads well beyond the tray
    assert (inside & ~on_table).sum() < 0.01 * inside.sum()  # the tray stands on the table


def test_older_sidecars_rebuild_the_table_outline_from_scene_and_camera(tray_sample):
    meta = {k: v for k, v in tray_sample.meta.items() if k != "table_outline"}
    table, play = surface_outlines(meta)
    expected = np.asarray(tray_sample.meta["table_outline"])
    assert play == tray_sample.meta["outline"]
    assert np.abs(np.asarray(table) - expected).max() < 1.5  # camera stored to 1e-3 units


def test_table_scenes_have_one_outline_for_both():
    s = make_sample(7, 151, 640, 480)  # a bare table whose edge crosses the frame
    assert s.meta["surface_kind"] == "table"
    meta = {k: v for k, v in s.meta.items() if k != "table_outline"}
    assert surface_outlines(meta) == (s.meta["outline"], s.meta["outline"])
    assert s.meta["table_outline"] == s.meta["outline"]


def test_region_codes_tell_tray_table_out_of_play_table_in_play_and_off(tray_sample):
    pytest.importorskip("torch", reason="the train extra builds the training targets")
    from vision.train.surface_data import (
        OFF,
        TABLE_IN_PLAY,
        TABLE_OUT,
        TRAY,
        region_codes,
        surface_targets,
    )

    codes = region_codes(tray_sample.meta, (120, 160))
    assert set(np.unique(codes)) == {OFF, TABLE_OUT, TRAY}
    tray = outline_mask(tray_sample.meta["outline"], 640, 480, (120, 160)).astype(bool)
    assert (codes[tray] == TRAY).all() and not (codes[~tray] == TRAY).any()
    one = surface_targets(codes, 40, 1)  # the playing surface: the tray alone
    three = surface_targets(codes, 40, 3)  # off, table (around the tray), tray
    assert one.shape == (1, 40, 40) and three.shape == (3, 40, 40)
    assert np.allclose(one[0], three[2]) and np.allclose(three.sum(0), 1.0)
    assert three[1].sum() > three[2].sum()  # more table than tray in view
    table_only = region_codes(make_sample(7, 151, 640, 480).meta, (120, 160))
    assert set(np.unique(table_only)) == {OFF, TABLE_IN_PLAY}


def _layers(table: float, tray: float, tray_cells: int) -> np.ndarray:
    """A 10x10 grid: table everywhere, a tray in the first ``tray_cells`` cells."""
    probs = np.zeros((LAYERS, 10, 10), np.float32)
    probs[1] = table
    probs[0] = 1 - table
    flat = probs.reshape(LAYERS, -1)
    flat[:, :tray_cells] = np.array([[0.0], [1 - tray], [tray]])
    return probs


def test_a_tray_in_view_is_the_surface_and_the_table_around_it_is_not():
    probs = _layers(table=0.9, tray=0.8, tray_cells=30)
    surface = play_surface(probs)
    assert (surface.reshape(-1)[:30] >= 0.5).all() and (surface.reshape(-1)[30:] < 0.5).all()


def test_a_speck_of_tray_leaves_the_table_as_the_surface():
    probs = _layers(table=0.9, tray=0.8, tray_cells=3)  # 3% of the grid, under MIN_TRAY
    surface = play_surface(probs)
    assert (surface >= 0.5).all()
    assert (play_surface(probs, min_tray=0.02)[0, 3:] < 0.5).all()


def test_single_layer_output_is_the_surface_and_other_shapes_are_refused():
    one = np.random.default_rng(0).random((1, 8, 8), dtype=np.float32)
    assert np.array_equal(play_surface(one), one[0])
    with pytest.raises(
        ValueError, match=r"expected \(1 or 3, h, w\) probabilities, got \(2, 8, 8\)"
    ):
        play_surface(np.zeros((2, 8, 8), np.float32))


def _conv_model(path, channels: int) -> None:
    """A one-convolution ONNX model with ``channels`` output maps at 1/4 of a 32 px input."""
    torch = pytest.importorskip("torch", reason="torch exports the test model")
    net = torch.nn.Sequential(torch.nn.Conv2d(3, channels, 4, 4), torch.nn.Sigmoid())
    torch.onnx.export(
        net, torch.zeros(1, 3, 32, 32), str(path), input_names=["image"],
        output_names=["surface"], dynamic_axes={"image": {0: "b"}}, dynamo=False,
    )  # fmt: skip


def test_surface_model_loads_one_and_three_layer_outputs_only(tmp_path):
    for channels in (1, 3):
        _conv_model(tmp_path / f"m{channels}.onnx", channels)
        model = SurfaceModel(tmp_path / f"m{channels}.onnx")
        assert model.layers == channels and f"layers={channels}" in repr(model)
        rgb = np.full((48, 64, 3), 200, np.uint8)
        assert model.layer_probabilities(rgb).shape == (channels, 8, 8)
        assert model.probability(rgb).shape == (8, 8)
    _conv_model(tmp_path / "m2.onnx", 2)
    with pytest.raises(SurfaceModelError, match=r"output \(batch, 1 or 3, h, w\)"):
        SurfaceModel(tmp_path / "m2.onnx")
