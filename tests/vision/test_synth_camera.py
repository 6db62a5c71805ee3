"""The synthetic camera (:mod:`vision.synth.camera`): which way is up and right in its photo,
its field of view and stretched pixels against OpenCV's own projection, rays and plane maps
that agree with the projection, and polygons clipped at the near plane and the frame."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from vision.synth.camera import NEAR, Camera, clip_to_rect, look_at

W, H = 640, 480


def test_the_photo_is_upright_and_not_mirrored():
    """Seen from the south and above, east is right and up is up: boxes drawn on a mirrored or
    upside-down photo would still match it, but the dice's faces would be mirror images."""
    cam = look_at(np.array([0.0, -10.0, 6.0]), np.zeros(3), 60.0, W, H)
    centre, east, above = cam.project(np.array([[0.0, 0, 0], [1.0, 0, 0], [0.0, 0, 1.0]]))
    assert centre == pytest.approx([W / 2, H / 2])
    assert east[0] > W / 2 + 10 and abs(east[1] - H / 2) < 1e-6
    assert above[1] < H / 2 - 10
    top = look_at(np.array([0.0, 0.0, 10.0]), np.zeros(3), 60.0, W, H)  # straight down
    north, east = top.project(np.array([[0.0, 1.0, 0], [1.0, 0, 0]]))
    assert north[1] < H / 2 - 10 and east[0] > W / 2 + 10


@pytest.mark.parametrize("aspect", [1.0, 4 / 3, 3 / 4])
def test_projection_matches_opencv_with_the_field_of_view_across_the_width(aspect):
    eye, target = np.array([3.0, -8.0, 5.0]), np.array([0.5, 0.2, 0.0])
    cam = look_at(eye, target, 64.0, W, H, roll_deg=7.0, aspect=aspect)
    f = (W / 2) / math.tan(math.radians(64.0) / 2)  # hfov spans the photo's width
    K = np.array([[f, 0, W / 2], [0, f * aspect, H / 2], [0, 0, 1.0]])
    assert pytest.approx(K) == cam.K
    pts = np.random.default_rng(0).uniform(-3, 3, (20, 3))
    rvec, _ = cv2.Rodrigues(cam.R)
    expected, _ = cv2.projectPoints(pts, rvec, -cam.R @ eye, K, None)
    assert cam.project(pts) == pytest.approx(expected[:, 0, :], abs=1e-6)
    # a point at half the field of view to the right lies on the photo's right edge
    fwd = (target - eye) / np.linalg.norm(target - eye)
    edge = eye + 10 * (fwd + math.tan(math.radians(32.0)) * cam.R[0])
    assert cam.project(edge[None])[0] == pytest.approx([W, H / 2])


def test_rays_and_plane_maps_agree_with_the_projection():
    cam = look_at(np.array([2.0, -9.0, 7.0]), np.zeros(3), 55.0, W, H, roll_deg=-5.0, aspect=0.75)
    pts = np.random.default_rng(1).uniform(-2, 2, (15, 3))
    rays = cam.ray_dirs(cam.project(pts))
    towards = pts - cam.C
    cos = np.sum(rays * towards, 1) / np.linalg.norm(rays, axis=1) / np.linalg.norm(towards, axis=1)
    assert cos == pytest.approx(np.ones(len(pts)), abs=1e-9)
    origin, u, v = np.array([1.0, -2.0, 0.0]), np.array([0.5, 0.1, 0.0]), np.array([0, 0.3, 0.2])
    M = cam.plane_homography(origin, u, v)
    for a, b in [(0.0, 0.0), (2.0, -1.0), (-3.0, 4.0)]:
        h = M @ np.array([a, b, 1.0])
        assert h[:2] / h[2] == pytest.approx(cam.project((origin + a * u + b * v)[None])[0])


def _plain_camera() -> Camera:
    """Camera coordinates are world coordinates: x right, y down, z forward."""
    return Camera(R=np.eye(3), C=np.zeros(3), f=100.0, cx=50.0, cy=50.0, width=100, height=100)


def test_a_polygon_reaching_behind_the_camera_is_cut_at_the_near_plane():
    cam = _plain_camera()
    ahead = np.array([[-1.0, -1, 2], [1, -1, 2], [1, -1, 4], [-1, -1, 4]])
    assert cam.clip_project(ahead) == pytest.approx(cam.project(ahead))
    across = np.array([[-1.0, -1, -1], [1, -1, -1], [1, -1, 3], [-1, -1, 3]])
    cut = [[1.0, -1, NEAR], [1.0, -1, 3], [-1.0, -1, 3], [-1.0, -1, NEAR]]
    assert cam.clip_project(across) == pytest.approx(cam.project(np.array(cut)))
    assert cam.clip_project(across - [0, 0, 5]) is None  # wholly behind


def test_clip_to_rect_keeps_the_part_inside_each_side():
    square = np.array([[-5.0, -5], [5, -5], [5, 5], [-5, 5]])
    for x0, y0, x1, y1 in [(0, 0, 10, 10), (-10, -10, 0, 0), (-2, -10, 3, 1), (-10, 2, 10, 4)]:
        got = clip_to_rect(square, x0, y0, x1, y1)
        inside = (max(x0, -5), max(y0, -5), min(x1, 5), min(y1, 5))
        assert got.min(0) == pytest.approx(inside[:2]) and got.max(0) == pytest.approx(inside[2:])
        area = abs(cv2.contourArea(got.astype(np.float32)))
        assert area == pytest.approx((inside[2] - inside[0]) * (inside[3] - inside[1]))
    tri = np.array([[0.0, 0], [10, 0], [0, 10]])  # a slanted edge cut by the frame
    got = clip_to_rect(tri, 0, 0, 4, 8)
    assert abs(cv2.contourArea(got.astype(np.float32))) == pytest.approx(4 * 8 - 2 * 2 / 2)
    assert len(clip_to_rect(square, 6, 6, 9, 9)) == 0
