"""Playing-surface geometry at its edges: which stretches of an outline are the photo's frame,
distances to an edge's end, a probability exactly at the threshold, a surface covering exactly the
full-frame share, and where a region's outline lies in photo pixels."""

from __future__ import annotations

import numpy as np
import pytest

from vision.table import mask_to_outline, outline_mask
from vision.table.geometry import FULL_FRAME, dice_map, edge_distance


def test_an_outline_all_along_the_frame_has_no_real_edge():
    frame = [(0, 0), (640, 0), (640, 480), (0, 480)]
    assert edge_distance(frame, (320, 240), 640, 480) == float("inf")
    # half a pixel off the frame (a rounded outline) is still the frame
    near = [(0.5, 0.4), (639.5, 0), (640, 479.6), (0, 480)]
    assert edge_distance(near, (320, 240), 640, 480) == float("inf")


def test_the_bottom_of_a_wide_photo_is_frame_and_a_real_edge_is_measured_to_its_end():
    left_half = [(0, 0), (320, 0), (320, 480), (0, 480)]  # one real edge: x = 320
    assert edge_distance(left_half, (100, 470), 640, 480) == pytest.approx(220)
    # a short real edge from (0, 200) to (100, 200): a point beside its end measures to the end
    notch = [(0, 0), (640, 0), (640, 480), (0, 480), (0, 200), (100, 200), (100, 100), (0, 100)]
    assert edge_distance(notch, (400, 200), 640, 480) == pytest.approx(300)


def test_a_probability_exactly_at_the_threshold_is_surface():
    prob = np.zeros((40, 40), np.float32)
    prob[10:30, 10:30] = 0.5
    outline = mask_to_outline(prob, 400, 400)
    assert outline, "expected the square read as surface"
    assert mask_to_outline(prob, 400, 400, threshold=0.51) == []


def test_a_surface_covering_exactly_the_full_frame_share_has_no_edge():
    prob = np.ones((40, 50), np.float32)
    prob.reshape(-1)[: round((1 - FULL_FRAME) * prob.size)] = 0.0  # 30 of 2000 cells off
    assert float((prob >= 0.5).mean()) == FULL_FRAME
    assert mask_to_outline(prob, 500, 400) is None
    prob.reshape(-1)[30] = 0.0  # one cell more off: under the share, an outline
    assert mask_to_outline(prob, 500, 400)


def test_a_regions_outline_is_centred_on_it_in_photo_pixels():
    """Cells 10..29 of a 40-cell grid over 400 px: the outline runs through the boundary cells'
    centres (105 and 295), as far in on each side."""
    prob = np.zeros((40, 40), np.float32)
    prob[10:30, 10:30] = 1.0
    outline = mask_to_outline(prob, 400, 400)
    xs, ys = [p[0] for p in outline], [p[1] for p in outline]
    assert (min(xs), max(xs), min(ys), max(ys)) == (105, 295, 105, 295)
    assert outline_mask(outline, 400, 400)[200, 200] == 1


def test_a_region_one_cell_thin_is_no_surface():
    prob = np.zeros((40, 40), np.float32)
    prob[20, 5:35] = 1.0  # a line, not an area: its outline has two points
    assert mask_to_outline(prob, 400, 400) == []


def test_a_triangle_is_a_surface():
    mask = outline_mask([(0, 0), (100, 0), (0, 100)], 100, 100)
    assert abs(int(mask.sum()) - 5000) < 200  # half the frame
    assert mask[10, 10] == 1 and mask[90, 90] == 0


def test_a_dice_map_disc_is_as_wide_as_the_dies_longer_side():
    m = dice_map([(20, 40, 60, 60)], 100, 100, (100, 100))  # 40 x 20, resting at (40, 52)
    assert m[52, 40] == 255 and m[52, 57] == 255  # 17 px away: inside a 20 px radius
    assert m[52, 63] == 0


def test_a_region_along_the_left_edge_reaches_the_frame_there():
    prob = np.zeros((40, 40), np.float32)
    prob[:, :20] = 0.9  # the left half of the frame
    outline = mask_to_outline(prob, 400, 400)
    xs, ys = [p[0] for p in outline], [p[1] for p in outline]
    assert (min(xs), min(ys), max(ys)) == (0, 0, 400)
    assert max(xs) == 195  # the boundary cells' centres: half a cell inside the true 200
