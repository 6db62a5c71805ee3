"""SurfaceModel at its edges, on tiny ONNX models whose grid can be counted by hand: the input
size (fixed, one side free, or from the metadata), the settings it passes on (threshold, tray
share, convex hull, certainty gate at its bar), a photo decoded smaller than its true size, and
the bounds its arguments are refused past."""

from __future__ import annotations

import numpy as np
import pytest

from vision.table import SurfaceModel, outline_mask, play_surface, surface_certainty

pytest.importorskip("onnx", reason="the onnx package builds the test models")
from dicecam_testing.surface_models import grid_model, logit  # noqa: E402


@pytest.fixture
def red_is_surface(tmp_path):
    """Red cells are surface (p = 1), others are not (p = 0)."""
    return grid_model(tmp_path / "red.onnx", [[80.0, 0.0, 0.0]], [-40.0])


def _photo(red: tuple[slice, slice], shape=(240, 320)) -> np.ndarray:
    rgb = np.zeros((*shape, 3), np.uint8)
    rgb[red[0], red[1], 0] = 255
    return rgb


LEFT_HALF = (slice(None), slice(0, 160))


# -- the bare functions ----------------------------------------------------------------------


def test_certainty_is_the_mean_over_the_cells_not_the_surest_one():
    assert surface_certainty(np.array([[0.0, 1.0], [0.5, 0.5]])) == 0.5
    assert surface_certainty(np.array([[1.0, 0.5, 0.5, 0.5]])) == 0.25


def test_play_surface_refuses_a_grid_without_layers():
    with pytest.raises(ValueError, match=r"expected \(1 or 3, h, w\) probabilities, got \(3, 8\)"):
        play_surface(np.zeros((3, 8), np.float32))


def _tray(cells: int, p: float) -> np.ndarray:
    """A 10x10 grid of table, with a tray of probability ``p`` in its first ``cells`` cells."""
    probs = np.zeros((3, 10, 10), np.float32)
    probs[1] = 1.0
    flat = probs.reshape(3, -1)
    flat[:, :cells] = np.array([[0.0], [1 - p], [p]], np.float32)
    return probs


def test_a_tray_at_the_threshold_and_at_the_share_asked_is_the_surface():
    at_threshold = play_surface(_tray(30, 0.5))  # "at least threshold": 0.5 counts
    assert (at_threshold.reshape(-1)[30:] == 0).all()
    at_share = play_surface(_tray(4, 0.8), min_tray=0.04)  # 4 of 100 cells: at least 4%
    assert (at_share.reshape(-1)[4:] == 0).all() and (at_share.reshape(-1)[:4] == 0.8).all()
    assert (play_surface(_tray(3, 0.8), min_tray=0.04) == 1.0).all()  # 3%: the table


# -- the model's arguments -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"threshold": 0.0}, "expected 0 < threshold < 1, got 0.0"),
        ({"threshold": 1.0}, "expected 0 < threshold < 1, got 1.0"),
        ({"min_area": -0.01}, "expected 0 <= min_area < 1, got -0.01"),
        ({"min_certainty": 1.0}, "expected 0 <= min_certainty < 1, got 1.0"),
        ({"min_certainty": -0.1}, "expected 0 <= min_certainty < 1, got -0.1"),
    ],
)
def test_arguments_past_their_bounds_are_refused(red_is_surface, kwargs, message):
    with pytest.raises(ValueError, match=message):
        SurfaceModel(red_is_surface, **kwargs)


def test_arguments_at_their_bounds_are_taken(red_is_surface):
    model = SurfaceModel(red_is_surface, threshold=0.01, min_area=0.0, min_certainty=0.0)
    assert (model.threshold, model.min_area, model.min_certainty) == (0.01, 0.0, 0.0)
    assert SurfaceModel(red_is_surface, threshold=0.99).threshold == 0.99


def test_a_photo_that_is_not_uint8_rgb_is_refused(red_is_surface):
    model = SurfaceModel(red_is_surface)
    with pytest.raises(ValueError, match="expected an H x W x 3 uint8 RGB image, got shape"):
        model.outline(np.zeros((240, 320, 3), np.float64))


# -- input size ------------------------------------------------------------------------------


def test_a_model_wider_than_tall_reads_the_photo_at_its_own_size(tmp_path):
    path = grid_model(tmp_path / "wide.onnx", [[80.0, 0.0, 0.0]], [-40.0], shape=(32, 48))
    model = SurfaceModel(path)
    assert model.imgsz == (32, 48)
    rgb = _photo(LEFT_HALF)
    grid = model.probability(rgb)
    assert grid.shape == (8, 12)
    assert (grid[:, :6] > 0.99).all() and (grid[:, 6:] < 0.01).all()
    outline = model.outline(rgb)
    assert outline is not None and 150 <= max(x for x, _ in outline) <= 170


def test_a_free_side_takes_the_size_from_the_metadata(tmp_path):
    path = grid_model(
        tmp_path / "free.onnx", [[80.0, 0.0, 0.0]], [-40.0], shape=(32, "w"),
        meta={"imgsz": "(32, 48)"},
    )  # fmt: skip
    model = SurfaceModel(path)
    assert model.imgsz == (32, 48)
    assert model.probability(_photo(LEFT_HALF)).shape == (8, 12)


def test_free_sides_and_no_metadata_read_the_photo_at_128(tmp_path):
    path = grid_model(tmp_path / "any.onnx", [[80.0, 0.0, 0.0]], [-40.0], shape=("h", "w"))
    model = SurfaceModel(path)
    assert model.imgsz == (128, 128)
    assert model.probability(_photo(LEFT_HALF)).shape == (32, 32)


# -- settings passed on ----------------------------------------------------------------------


def test_the_threshold_decides_which_cells_are_surface(tmp_path):
    # red cells p = 0.6, others 0.4
    path = grid_model(tmp_path / "m.onnx", [[logit(0.6) - logit(0.4), 0, 0]], [logit(0.4)])
    rgb = _photo(LEFT_HALF)
    outline = SurfaceModel(path).outline(rgb)
    assert outline is not None and 150 <= max(x for x, _ in outline) <= 170
    assert SurfaceModel(path, threshold=0.7).outline(rgb) is None  # no cell reaches 0.7
    assert SurfaceModel(path, threshold=0.3).outline(rgb) is None  # every cell: fills the frame


def _tray_model(path):
    """Three layers: red cells are tray (0.6) with some table (0.4); others are table (0.75)."""
    table_red = logit(0.4) - logit(0.75)
    return grid_model(
        path,
        [[0.0, 0.0, 0.0], [table_red, 0.0, 0.0], [40.0 + logit(0.6), 0.0, 0.0]],
        [0.0, logit(0.75), -40.0],
    )


def test_the_models_threshold_and_tray_share_pick_the_tray(tmp_path):
    path = _tray_model(tmp_path / "tray.onnx")
    rgb = _photo((slice(0, 120), slice(0, 160)))  # a tray in the top-left quarter
    tray = SurfaceModel(path).probability(rgb)
    assert np.allclose(tray[:4, :4], 0.6, atol=1e-3) and (tray[4:] < 0.01).all()
    # the tray's 0.6 is under a threshold of 0.7: the table (and the tray on it) is the surface
    assert (SurfaceModel(path, threshold=0.7).probability(rgb) >= 0.7).all()
    # the tray is a quarter of the grid, under a min_tray of 0.3: the table
    assert (SurfaceModel(path, min_tray=0.3).probability(rgb) >= 0.7).all()
    assert (SurfaceModel(path, min_tray=0.25).probability(rgb)[4:] < 0.01).all()


def test_convex_fills_the_notch_of_an_l_shaped_surface(red_is_surface):
    rgb = _photo((slice(None), slice(None)))
    rgb[:120, 160:, 0] = 0  # the surface is all but the top-right quarter
    notch = (200, 100)  # (x, y): in that quarter, inside the L's hull
    plain = SurfaceModel(red_is_surface).outline(rgb)
    hull = SurfaceModel(red_is_surface, convex=True).outline(rgb)
    assert plain is not None and hull is not None
    assert outline_mask(plain, 320, 240)[notch[1], notch[0]] == 0
    assert outline_mask(hull, 320, 240)[notch[1], notch[0]] == 1
    assert outline_mask(hull, 320, 240)[20, 300] == 0  # the far corner stays off


def test_a_grid_exactly_as_sure_as_the_gate_gives_its_outline(red_is_surface):
    # red cells p = 1, black p = 0.5 exactly (logit 0), green p = 0: certainty 3/4 exactly
    path = grid_model(red_is_surface.parent / "g.onnx", [[80.0, -80.0, 0.0]], [0.0])
    rgb = _photo(LEFT_HALF)
    rgb[:, 160:240, 1] = 255
    model = SurfaceModel(path, min_certainty=0.75)
    assert surface_certainty(model.probability(rgb)) == 0.75
    outline = model.outline(rgb)
    assert outline is not None and 150 <= max(x for x, _ in outline) <= 170
    assert SurfaceModel(path, min_certainty=0.76).outline(rgb) is None


# -- a photo decoded smaller than its true size ----------------------------------------------


def test_a_photo_decoded_at_half_size_gives_its_outline_in_true_pixels(red_is_surface):
    model = SurfaceModel(red_is_surface)
    full = model.outline(_photo(LEFT_HALF))
    half = model.outline(_photo((slice(None), slice(0, 80)), (120, 160)), (320, 240))
    assert full is not None and half is not None
    assert 150 <= max(x for x, _ in half) <= 170 and max(y for _, y in half) == 240
    assert np.allclose(sorted(half), sorted(full), atol=5)


def test_the_dice_map_is_drawn_in_the_photos_true_pixels(tmp_path):
    # a dice-aware model that reads only its fourth channel: cells under a die are surface
    path = grid_model(tmp_path / "dice.onnx", [[0.0, 0.0, 0.0, 80.0]], [-40.0])
    model = SurfaceModel(path)
    assert model.reads_dice
    boxes = [(240.0, 120.0, 320.0, 200.0)]  # a die in the right half, low
    full = model.probability(np.zeros((240, 320, 3), np.uint8), boxes=boxes)
    half = model.probability(np.zeros((120, 160, 3), np.uint8), boxes=boxes, size=(320, 240))
    assert np.array_equal(full, half)
    assert (full[:, :4] < 0.01).all() and (full[:, 4:] > 0.5).any()
    assert (model.probability(np.zeros((240, 320, 3), np.uint8)) < 0.01).all()
    # the outline is drawn from the same map: around the die, in the photo's true pixels
    outline = model.outline(np.zeros((240, 320, 3), np.uint8), boxes=boxes)
    assert outline is not None and min(x for x, _ in outline) >= 200
    half_outline = model.outline(np.zeros((120, 160, 3), np.uint8), (320, 240), boxes=boxes)
    assert half_outline == outline
    assert model.outline(np.zeros((240, 320, 3), np.uint8)) is None  # no dice: no surface
