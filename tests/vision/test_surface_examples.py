"""The outline model's targets and augmentation (:mod:`vision.train.surface_data`): each region
code goes to its layer, and a crop or flip moves the photo, its target and the share of it that
is known together, so the model learns where the surface is, not its mirror image."""

from __future__ import annotations

import numpy as np
import pytest

from vision.train.surface_data import (
    OFF,
    TABLE_IN_PLAY,
    TABLE_OUT,
    TRAY,
    UNKNOWN,
    augmented_batch,
    known_share,
    plain_batch,
    surface_targets,
)

cv2 = pytest.importorskip("cv2")

QUADRANTS = np.array([[OFF, TABLE_OUT], [TABLE_IN_PLAY, TRAY]], np.uint8).repeat(4, 0).repeat(4, 1)


def test_one_layer_is_the_playing_surface_and_three_are_off_table_and_tray():
    one = surface_targets(QUADRANTS, 2, 1)
    # the table top out of play (a tray stands on it) is not the playing surface
    assert one.tolist() == [[[0.0, 0.0], [1.0, 1.0]]]
    off, table, tray = surface_targets(QUADRANTS, 2, 3)
    assert off.tolist() == [[1.0, 0.0], [0.0, 0.0]]
    assert table.tolist() == [[0.0, 1.0], [1.0, 0.0]]
    assert tray.tolist() == [[0.0, 0.0], [0.0, 1.0]]


def test_unknown_pixels_are_no_surface_and_no_known_share():
    codes = np.full((4, 4), TABLE_IN_PLAY, np.uint8)
    codes[:, :2] = UNKNOWN
    assert surface_targets(codes, 2, 1).tolist() == [[[0.0, 1.0], [0.0, 1.0]]]
    assert known_share(codes, 2).tolist() == [[0.0, 1.0], [0.0, 1.0]]


def test_validation_targets_are_the_playing_surface():
    images = np.zeros((1, 8, 8, 3), np.uint8)
    x, y = plain_batch(images, QUADRANTS[None], size_in=8)
    assert x.shape == (1, 3, 8, 8)
    assert y.tolist() == [[[0.0, 0.0], [1.0, 1.0]]]


def _layout(mark: int, size: int = 88) -> tuple[np.ndarray, np.ndarray]:
    """A photo whose fourth channel (the dice map, never colour-jittered) marks the pixels of
    region ``mark``, and its codes: top left surface, top right unknown, bottom half off."""
    h = size // 2
    codes = np.full((size, size), OFF, np.uint8)
    codes[:h, : h - 7] = TABLE_IN_PLAY  # edges off the output cells' grid
    codes[:h, h - 7 :] = UNKNOWN
    image = np.full((size, size, 4), 120, np.uint8)
    image[..., 3] = np.where(codes == mark, 255, 0)
    return image[None], codes[None]


@pytest.mark.parametrize("seed", range(6))
def test_crops_and_flips_move_photo_target_and_known_share_together(seed):
    # the same draws twice: once marking the surface, once the unknown pixels
    (marks_surface, codes), (marks_unknown, _) = _layout(TABLE_IN_PLAY), _layout(UNKNOWN)
    n = 4
    x, y, known = augmented_batch(
        np.random.default_rng(seed), marks_surface.repeat(n, 0), codes.repeat(n, 0), 64
    )
    xu, yu, _ = augmented_batch(
        np.random.default_rng(seed), marks_unknown.repeat(n, 0), codes.repeat(n, 0), 64
    )
    assert (yu == y).all()  # the same crops and flips
    assert x.shape == (n, 4, 64, 64) and y.shape == (n, 1, 16, 16) and known.shape == (n, 16, 16)
    assert x[:, 3].max() == pytest.approx(1.0)  # the dice map scaled to 0..1, like colour
    surface = x[:, 3].reshape(n, 16, 4, 16, 4).mean(axis=(2, 4))
    expected_known = 1 - xu[:, 3].reshape(n, 16, 4, 16, 4).mean(axis=(2, 4))
    np.testing.assert_allclose(known, expected_known, atol=0.05)
    # a partly known cell's target is the share of surface among its known pixels
    seen = expected_known > 0.05
    np.testing.assert_allclose(
        y[:, 0][seen], (surface / np.maximum(expected_known, 1e-6))[seen], atol=0.08
    )
    assert (y[:, 0][~seen] == 0).all()


def test_a_partly_known_cell_of_surface_is_surface():
    (image, codes) = _layout(TABLE_IN_PLAY)
    _, y, known = augmented_batch(np.random.default_rng(0), image.repeat(8, 0), codes.repeat(8, 0))
    assert ((known > 0.05) & (known < 0.95) & (y[:, 0] > 0.95)).any()


def test_flips_happen_both_ways_over_a_batch():
    images, codes = _layout(TABLE_IN_PLAY)
    x, y, _ = augmented_batch(np.random.default_rng(0), images.repeat(24, 0), codes.repeat(24, 0))
    surface = y[:, 0]
    left = surface[:, :, :8].sum((1, 2)) > surface[:, :, 8:].sum((1, 2))
    top = surface[:, :8].sum((1, 2)) > surface[:, 8:].sum((1, 2))
    assert 0 < left.sum() < 24 and 0 < top.sum() < 24


def test_a_split_gives_rgb_photos_their_regions_and_the_map_of_labelled_dice_only(tmp_path):
    import json

    from vision.train.surface_data import load_surface_split

    root = tmp_path / "s"
    (root / "images" / "train").mkdir(parents=True)
    (root / "meta" / "train").mkdir(parents=True)
    photo = np.zeros((80, 160, 3), np.uint8)
    photo[..., 0] = 250  # blue, as OpenCV writes it (BGR)
    cv2.imwrite(str(root / "images" / "train" / "a.jpg"), photo)
    meta = {
        "width": 160,
        "height": 80,
        "outline": [[0, 0], [80, 0], [80, 80], [0, 80]],  # the left half of the photo
        "table_outline": [[0, 0], [80, 0], [80, 80], [0, 80]],
        "dice": [
            {"labelled": True, "box": [130, 30, 150, 50]},  # right, near the middle
            {"labelled": False, "box": [10, 5, 30, 25]},  # hidden past labelling: no map
        ],
    }
    (root / "meta" / "train" / "a.json").write_text(json.dumps(meta))
    images, codes = load_surface_split(root, "train", size=32, dice=True)
    assert images.shape == (1, 32, 32, 4) and codes.shape == (1, 32, 32)
    assert images[0, 16, 16, 2] > 200 and images[0, 16, 16, 0] < 50  # RGB: blue last
    assert (codes[0, :, :14] == TABLE_IN_PLAY).all() and (codes[0, :, 18:] == OFF).all()
    where = images[0, ..., 3]
    assert where[:, 25:31].max() == 255  # the labelled die, 28 of 32 across
    assert where[:, :16].max() == 0  # nothing where the hidden one lies
