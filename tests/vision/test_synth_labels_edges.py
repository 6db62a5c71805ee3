"""Synthetic labels (:mod:`vision.synth.labels`) from small hand-built states: where a die lies
(on the playing surface, off it, in the air), its box in a camera's view, and how much of it
shows in the die-id buffer."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vision.synth.camera import look_at
from vision.synth.labels import die_box, die_state, label_dice
from vision.synth.physics import DiePose, Surface

TABLE = Surface(kind="table", table=(5.0, 3.0), table_height=0.8)
W, H = 640, 480


def _pose(x: float, y: float, z: float, *, contact: bool = True, moving: bool = False) -> DiePose:
    return DiePose(np.array([x, y, z], float), np.eye(3), 1.0, contact, moving)


def _tilted(deg: float) -> np.ndarray:
    a = math.radians(deg)
    return np.array([[1, 0, 0], [0, math.cos(a), -math.sin(a)], [0, math.sin(a), math.cos(a)]])


@pytest.mark.parametrize(
    ("where", "state"),
    [
        ((0.0, 0.0, 0.5), "table"),
        ((5.0, -3.0, 0.5), "table"),  # at the very corner of the table top: still on it
        ((4.0, 3.5, 0.5), "off_table"),  # x inside the table's 5, y past its 3
        ((5.2, 0.0, 0.5), "off_table"),
        ((0.0, 0.0, -3.0), "off_table"),  # under the table top, on the floor
        ((0.0, 0.0, -0.9), "table"),  # sunk less than its size: still on the table
    ],
)
def test_a_die_at_rest_is_on_the_playing_surface_only_within_it(where, state):
    assert die_state(_pose(*where), TABLE, 0.0) == state


def test_a_die_in_the_air_is_in_the_air_wherever_it_is_and_a_leaning_one_is_cocked():
    assert die_state(_pose(0, 0, 2, contact=False), TABLE, 30.0) == "in_air"
    assert die_state(_pose(9, 9, -3, contact=False), TABLE, 0.0) == "in_air"
    assert die_state(_pose(0, 0, 0.5), TABLE, 12.0) == "table"  # at the limit: a clear face
    assert die_state(_pose(0, 0, 0.5), TABLE, 12.1) == "cocked"
    assert die_state(_pose(9, 0, 0.5), TABLE, 40.0) == "off_table"  # off wins over cocked


def _camera():
    return look_at(np.array([0.0, -10.0, 20.0]), np.zeros(3), 60.0, W, H)


def test_a_die_behind_the_camera_or_wholly_out_of_frame_has_no_box():
    cam = _camera()
    assert die_box(cam, _pose(0, 0, 0.5)) is not None
    assert die_box(cam, _pose(0, -20, 40)) is None  # behind the camera
    assert die_box(cam, _pose(0, -10, 19.5)) is None  # at the lens
    assert die_box(cam, _pose(-40, 0, 0.5)) is None  # far left of the frame, rows in view


def test_a_die_cut_by_the_frame_has_its_box_clipped_to_the_photo():
    cam = _camera()
    (x1, y1, x2, y2) = die_box(cam, _pose(0, 0, 0.5))
    assert 0 < x1 < x2 < W and 0 < y1 < y2 < H
    edge = cam.project(np.array([[0.0, 0.0, 0.5]]))[0]
    for x in np.linspace(5, 20, 31):  # find a die that straddles the right edge
        box = die_box(cam, _pose(x, 0, 0.5))
        if box is not None and box[2] == W and box[0] < W - 2:
            break
    else:
        pytest.fail(f"no die straddles the right edge (centre die at {edge})")
    assert box[0] > 0 and box[2] == W and 0 < box[1] < box[3] < H


def test_labels_count_what_shows_in_the_die_id_buffer():
    cam = _camera()
    poses = [_pose(0, 0, 0.5, moving=True), _pose(2, 0, 0.5), _pose(-2, 0, 0.5)]
    poses[2] = DiePose(poses[2].position, _tilted(30.0), 1.0, True, False)
    ids = np.zeros((H, W), np.int32)
    boxes = [die_box(cam, p) for p in poses]
    shown = []
    for i, (x1, y1, _x2, _y2) in enumerate(boxes):
        ys, xs = int(math.ceil(y1)) + 1, int(math.ceil(x1)) + 1
        ids[ys : ys + 6, xs : xs + 5] = i + 1  # 30 px of each die show
        shown.append([xs, ys, xs + 5, ys + 6])
    # die 0 covered 20 px when drawn (more show: never over 1), die 1 covered 101: 30 show,
    # under MIN_VISIBLE; die 2 covered 100: 30 show, exactly MIN_VISIBLE
    dice = label_dice(poses, TABLE, cam, ids, {0: 20.0, 1: 101.0, 2: 100.0}, n_styles=2)
    assert [d["visible"] for d in dice] == [1.0, round(30 / 101, 3), 0.3]
    assert [d["labelled"] for d in dice] == [True, False, True]
    assert [d["visible_box"] for d in dice] == shown  # the last pixel's edge, exclusive
    assert [d["style"] for d in dice] == [0, 1, 0]
    assert [d["moving"] for d in dice] == [True, False, False]
    assert [(d["value"], d["class"], d["state"]) for d in dice] == [
        (1, 0, "table"),
        (1, 0, "table"),
        (1, 6, "cocked"),
    ]
    assert dice[0]["box"] == [round(v, 2) for v in boxes[0]]
    # a die drawn over no pixel shows nothing and has no label line
    none = label_dice(poses[:1], TABLE, cam, np.zeros((H, W), np.int32), {0: 0.0}, 1)
    assert none[0]["visible"] == 0.0 and none[0]["visible_box"] is None
    assert not none[0]["labelled"]


def test_a_die_under_2_px_a_side_gets_no_label_line():
    far = look_at(np.array([0.0, -200.0, 300.0]), np.zeros(3), 60.0, W, H)
    (x1, y1, x2, y2) = die_box(far, _pose(0, 0, 0.5))
    assert 1 <= x2 - x1 < 2 or 1 <= y2 - y1 < 2, (x1, y1, x2, y2)
    ids = np.zeros((H, W), np.int32)
    ids[int(y1) : int(math.ceil(y2)), int(x1) : int(math.ceil(x2))] = 1
    (die,) = label_dice([_pose(0, 0, 0.5)], TABLE, far, ids, {0: 1.0}, 1)
    assert die["visible"] == 1.0 and not die["labelled"]
