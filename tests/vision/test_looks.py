"""The look helpers the reader is built from: input shapes, doubt, mirror weighing, pixels."""

from __future__ import annotations

import numpy as np
import pytest

from vision.boxes import Letterbox, box_iou, nms
from vision.io import LoadedImage
from vision.looks import (
    decode_look,
    doubtful,
    mirror_outputs,
    photo_boxes,
    rect_input_shape,
    small_dice,
    with_mirror_look,
)
from vision.yolo_output import ClassRoles


def test_rect_input_shape_pads_the_short_side_to_the_stride_only():
    assert rect_input_shape(480, 640, size=512, stride=32) == (384, 512)
    assert rect_input_shape(640, 480, size=512, stride=32) == (512, 384)
    assert rect_input_shape(10, 1000, size=320, stride=32) == (32, 320)


def test_a_look_is_doubtful_only_with_a_die_under_twice_the_threshold():
    look = lambda *c: (None, np.array(c), None, None)  # noqa: E731
    assert doubtful(look(0.3, 0.9), 0.25)
    assert not doubtful(look(0.5, 0.9), 0.25)
    assert not doubtful(look(0.1), 0.25)  # under the threshold: not a die at all
    assert doubtful(look(0.25), 0.25)  # at it: a die, which the mirror look can halve
    assert not doubtful(look(), 0.25)


def test_the_mirror_look_halves_an_unseen_box_and_drops_it_under_the_floor():
    boxes = np.array([[10, 10, 30, 30], [50, 50, 60, 60]], np.float32)
    look = (boxes, np.array([0.9, 0.45]), np.array([3, 5]), np.array([False, True]))
    # the mirror of a 100-wide input sees only the first die (at x 70..90 in its own pixels)
    mirror = (np.array([[70, 10, 90, 30]], np.float32), np.array([0.9]), None, None)
    b, c, v, k = with_mirror_look(look, mirror, 100, floor=0.25, iou=0.5, max_det=10)
    assert c.tolist() == [0.9] and v.tolist() == [3] and k.tolist() == [False]
    b, c, v, k = with_mirror_look(look, mirror, 100, floor=0.2, iou=0.5, max_det=10)
    assert np.allclose(c, [0.9, 0.225]) and v.tolist() == [3, 5] and k.tolist() == [False, True]


def test_boxes_the_mirror_look_moves_onto_one_die_are_one_die_after_it():
    # two boxes 12 px apart (IoU 0.25: two dice), each confirmed by a surer mirror box 2 px
    # apart; moved towards them they overlap by IoU 0.63: one die, the surer box kept
    boxes = np.array([[0, 0, 20, 20], [12, 0, 32, 20]], np.float32)
    look = (boxes, np.array([0.3, 0.29]), np.array([2, 4]), np.array([False, False]))
    mirror = (np.array([[75, 0, 95, 20], [73, 0, 93, 20]], np.float32), np.array([0.9, 0.9]))
    b, c, v, _ = with_mirror_look(look, (*mirror, None, None), 100, floor=0.25, iou=0.5, max_det=9)
    assert v.tolist() == [2] and c.tolist() == [0.3]
    np.testing.assert_allclose(b, [[3.75, 0, 23.75, 20]])


def test_decode_look_keeps_the_surest_max_det_boxes_after_nms():
    roles = ClassRoles.from_names({i: str(i + 1) for i in range(6)})
    pred = np.zeros((10, 4), np.float32)  # raw layout: cx, cy, w, h, six face scores
    pred[:4] = np.array([[10, 10, 10, 10], [11, 10, 10, 10], [50, 50, 10, 10], [90, 90, 10, 10]]).T
    pred[4 + np.array([0, 1, 2, 3]), np.arange(4)] = [0.5, 0.9, 0.7, 0.2]
    boxes, conf, values, cocked = decode_look(
        pred, roles, end2end=False, floor=0.1, iou=0.5, max_det=2
    )
    # the 1 at 0.5 overlaps the 2 at 0.9 (NMS); of the 2, 3 and 4 the surest two stay
    assert values.tolist() == [2, 3] and conf.tolist() == pytest.approx([0.9, 0.7])
    assert boxes.tolist() == [[6, 5, 16, 15], [45, 45, 55, 55]] and not cocked.any()


def test_photo_boxes_undo_the_letterbox_and_report_sides_in_original_pixels():
    rgb = np.zeros((240, 320, 3), np.uint8)  # a 640x480 photo decoded at half size
    img = LoadedImage(rgb=rgb, width=640, height=480, name="p")
    lb = Letterbox(gain=0.5, left=0, top=8)  # 320x240 -> 160x120, padded 8 px at the top
    boxes, sides = photo_boxes(np.array([[10, 18, 20, 38]]), lb, img)
    assert boxes.tolist() == [[20.0, 20.0, 40.0, 60.0]]  # decoded pixels
    assert sides.tolist() == [80.0]  # the photo's own pixels: 40 tall at half size
    # a box reaching past the photo's right edge (x 280..340 of 320) is measured inside it
    boxes, sides = photo_boxes(np.array([[140, 18, 170, 28]]), lb, img)
    assert boxes.tolist() == [[280.0, 20.0, 340.0, 40.0]] and sides.tolist() == [80.0]


def test_small_dice_judges_the_median_side_at_the_model_size():
    assert small_dice([10, 12, 40], 1280, 960, size=512, below=24)  # median 12 -> 4.8 px
    assert not small_dice([60, 70, 80], 640, 480, size=512, below=24)  # 70 -> 56 px
    assert not small_dice([], 640, 480, size=512, below=24)
    # the median of the sides as found, in no order
    assert small_dice([10, 80, 12], 1280, 960, size=512, below=24)  # median 12 -> 4.8 px
    assert not small_dice([80, 10, 90], 1280, 960, size=512, below=24)  # 80 -> 32 px


def test_nms_keeps_a_box_overlapping_exactly_at_the_bar_and_boxes_without_area():
    boxes = np.array([[0, 0, 20, 20], [0, 0, 20, 10], [0, 0, 20, 15]], float)  # IoU 0.5, 0.75
    assert nms(boxes, np.array([0.9, 0.8, 0.7]), 0.5).tolist() == [0, 1]
    # zero-width boxes (a degenerate detector output) overlap nothing: never NaN
    flat = np.array([[10, 0, 10, 20], [50, 0, 50, 20]], float)
    assert box_iou(flat[0], flat).tolist() == [0.0, 0.0]
    assert nms(flat, np.array([0.9, 0.8]), 0.5).tolist() == [0, 1]


def test_mirror_outputs_run_only_the_doubtful_rows_mirrored_or_the_whole_fixed_batch():
    blob = np.arange(3 * 1 * 2 * 3, dtype=np.float32).reshape(3, 1, 2, 3)
    seen = []

    def run(b):
        seen.append(b.copy())
        return b * 10

    out = mirror_outputs(run, blob, [0, 2], 3)
    assert len(seen) == 1 and seen[0].shape == (2, 1, 2, 3)
    np.testing.assert_array_equal(seen[0], blob[[0, 2]][..., ::-1])
    assert out[1] is None
    np.testing.assert_array_equal(out[2], blob[2][..., ::-1] * 10)
    seen.clear()
    out = mirror_outputs(run, blob, [1], 2, fixed_batch=3)  # 2 photos in a batch of 3
    assert seen[0].shape == (3, 1, 2, 3) and out[0] is None
    np.testing.assert_array_equal(out[1], blob[1][..., ::-1] * 10)
    seen.clear()
    assert mirror_outputs(run, blob, [], 3) == [None, None, None] and not seen


def test_a_box_the_mirror_look_halves_exactly_to_the_floor_stays():
    look = (np.array([[10, 10, 30, 30]], np.float32), np.array([0.5]), np.array([3]), np.zeros(1))
    nothing = (np.zeros((0, 4), np.float32), np.zeros(0), None, None)
    _, c, v, _ = with_mirror_look(look, nothing, 100, floor=0.25, iou=0.5, max_det=10)
    assert c.tolist() == [0.25] and v.tolist() == [3]


def test_small_dice_takes_the_upper_median_of_an_even_count_and_the_longer_photo_side():
    # 1280 x 960 in 512: gain 0.4; sides 10 and 80 -> the upper one, 32 px, is not small
    assert not small_dice([80, 10], 1280, 960, size=512, below=24)
    assert small_dice([10, 40], 1280, 960, size=512, below=24)  # 16 px
    # gain from the longer side (640): 50 px -> 40, small under 48 (not 53 by the 480 side)
    assert small_dice([50], 640, 480, size=512, below=48)
    assert small_dice([50], 480, 640, size=512, below=48)
    assert not small_dice([60], 640, 480, size=512, below=48)  # exactly 48: not under it
