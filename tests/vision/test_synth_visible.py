"""How much of a synthetic die shows (:func:`vision.synth.labels.label_dice`'s ``visible``, the
share that decides whether a die gets a label line) against the silhouette the renderer
actually draws: a die in full view is wholly visible at any size and corner, one half hidden
by another die or half out of the frame about half. Counted against the die's hull, the drawn
outline (stroked, anti-aliased, up to a pixel wider all round) made a small die read up to
1.5 times its size, so a die hidden but for a quarter passed MIN_VISIBLE (0.3)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vision.synth.camera import look_at
from vision.synth.labels import MIN_VISIBLE, die_box, label_dice
from vision.synth.physics import DiePose, Surface
from vision.synth.render import Canvas

W = H = 200
LIGHT = {"ambient": 0.6, "diffuse": 0.4, "tint": [1.0, 1.0, 1.0]}
LIGHT |= {"elevation_deg": 90.0, "azimuth_deg": 0.0}
TABLE = Surface(kind="table", table=(30.0, 30.0), table_height=0.0)
TEX = {v: np.full((64, 64, 4), 255.0, np.float32) for v in range(1, 7)}


def _style(corner: float) -> dict:
    return {"body": [200.0] * 3, "opacity": 1.0, "corner": corner, "gloss": 0.0}


def _turned(deg: float) -> np.ndarray:
    a = math.radians(deg)
    return np.array([[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1.0]])


def _pose(x: float, y: float, z: float = 1.0, deg: float = 25.0) -> DiePose:
    return DiePose(np.array([x, y, z]), _turned(deg), 2.0, in_contact=True, moving=False)


@pytest.mark.parametrize("height", [10.0, 45.0], ids=["close", "far"])
@pytest.mark.parametrize("corner", [0.05, 0.18, 0.3])
def test_a_die_in_full_view_is_wholly_visible(height: float, corner: float) -> None:
    canvas = Canvas.new(look_at(np.array([0.0, 0.0, height]), np.zeros(3), 40.0, W, H))
    cam = canvas.cam
    area = canvas.die(_pose(0.0, 0.0), 1, TEX, _style(corner), LIGHT)
    assert _in_box(cam, _pose(0.0, 0.0), canvas.ids, 1) > 100  # the far die is 13 px wide
    (die,) = label_dice([_pose(0.0, 0.0)], TABLE, cam, canvas.ids, {0: area}, 1)
    assert die["visible"] == 1.0


def _in_box(cam, pose: DiePose, ids: np.ndarray, die_id: int) -> int:
    """The pixels of die ``die_id`` in ``ids`` within ``pose``'s box."""
    x1, y1, x2, y2 = die_box(cam, pose)
    x1, y1, x2, y2 = math.floor(x1), math.floor(y1), math.ceil(x2), math.ceil(y2)
    return int((ids[y1:y2, x1:x2] == die_id).sum())


def _alone(cam, pose: DiePose, corner: float) -> int:
    """The pixels ``pose``'s die takes in its box drawn alone in ``cam``'s frame."""
    canvas = Canvas.new(cam)
    canvas.die(pose, 1, TEX, _style(corner), LIGHT)
    return _in_box(cam, pose, canvas.ids, 1)


def test_a_far_die_hidden_but_for_a_quarter_is_not_labelled() -> None:
    """A small die (about 13 px) under a die drawn over three quarters of it."""
    cam = look_at(np.array([0.0, 0.0, 45.0]), np.zeros(3), 40.0, W, H)
    canvas = Canvas.new(cam)
    below, above = _pose(0.0, 0.0, deg=0.0), _pose(0.5, 0.0, z=3.0, deg=0.0)
    areas = {i: canvas.die(p, i + 1, TEX, _style(0.3), LIGHT) for i, p in enumerate([below, above])}
    truth = _in_box(cam, below, canvas.ids, 1) / _alone(cam, below, 0.3)
    assert 0.15 < truth < MIN_VISIBLE
    (hidden, top) = label_dice([below, above], TABLE, cam, canvas.ids, areas, 1)
    assert hidden["visible"] == pytest.approx(truth, abs=0.02) and not hidden["labelled"]
    assert top["visible"] == pytest.approx(1.0, abs=0.01) and top["labelled"]


@pytest.mark.parametrize("height", [10.0, 45.0], ids=["close", "far"])
def test_a_die_partly_out_of_the_frame_shows_the_share_of_it_in_the_frame(height: float) -> None:
    import cv2

    cam = look_at(np.array([0.0, 0.0, height]), np.zeros(3), 40.0, W, H)

    def share_in_frame(x: float) -> float:  # of the die's hull, projected
        corners = np.array([[x + a, b, 1.0 + c] for a in (-1, 1) for b in (-1, 1) for c in (-1, 1)])
        hull = cv2.convexHull(cam.project(corners).astype(np.float32))[:, 0, :]
        inside = hull.copy()
        inside[:, 0] = np.clip(inside[:, 0], 0, W)
        return float(cv2.contourArea(inside) / cv2.contourArea(hull))

    # slide the die left until about half of it is out of the frame
    x = next(x for x in np.arange(0.0, height, height / 400) if share_in_frame(-x) < 0.5)
    pose = _pose(-x, 0.0, deg=0.0)
    canvas = Canvas.new(cam)
    area = canvas.die(pose, 1, TEX, _style(0.3), LIGHT)
    (die,) = label_dice([pose], TABLE, cam, canvas.ids, {0: area}, 1)
    assert die["visible"] == pytest.approx(share_in_frame(-x), abs=0.05)
