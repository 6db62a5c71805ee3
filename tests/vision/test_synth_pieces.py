"""Game pieces in synthetic scenes: 3D distractors beside the roll, never labelled."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.synth import make_sample, write_dataset
from vision.synth.camera import look_at
from vision.synth.physics import DiePose, Surface
from vision.synth.pieces import (
    PIECE_KINDS,
    draw_piece,
    free_pieces,
    piece_parts,
    piece_points,
    sample_pieces,
)
from vision.synth.render import Canvas
from vision.synth.scene import sample_scene


def _die(x: float, y: float) -> DiePose:
    return DiePose(np.array([x, y, 0.5]), np.eye(3), 1.0, True, False)


def test_pieces_are_stacks_of_parts_and_blocks_are_never_cubes():
    pieces = sample_pieces(np.random.default_rng(0), count=200)
    assert {p["kind"] for p in pieces} == set(PIECE_KINDS)
    for piece in pieces:
        parts = piece_parts({**piece, "xy": [0.0, 0.0]})
        assert parts and all(foot.shape == top.shape for foot, top in parts)
        assert all((foot[:, 2] <= top[:, 2]).all() for foot, top in parts)
        assert min(foot[:, 2].min() for foot, _ in parts) == 0.0  # it stands on the table
        if piece["kind"] == "block":
            ((foot, top),) = parts
            sides = sorted(
                [np.linalg.norm(foot[1] - foot[0]), np.linalg.norm(foot[2] - foot[1]), top[0, 2]]
            )
            assert sides[2] / sides[0] > 2.0


def test_pieces_stand_beside_the_dice_never_on_them_nor_in_a_tray():
    piece = {**sample_pieces(np.random.default_rng(1), count=1)[0], "kind": "disc"}
    piece |= {"scale": 1.0, "shape": [0.5, 0.5, 0.5]}
    table = Surface("table", (20.0, 15.0), 40.0)
    dice = [_die(0.0, 0.0), _die(2.0, 0.0)]
    beside = free_pieces([{**piece, "offset": [5.0, 90.0]}], table, dice)
    assert len(beside) == 1 and beside[0]["xy"] == pytest.approx([1.0, 5.0])
    assert free_pieces([{**piece, "offset": [1.5, 0.0]}], table, dice) == []  # on a die
    assert free_pieces([{**piece, "offset": [19.0, 0.0]}], table, dice) == []  # off the edge
    assert free_pieces([{**piece, "offset": [5.0, 90.0]}], table, []) == []
    tray = Surface("tray", (20.0, 15.0), 40.0, interior=(8.0, 6.0), rim=(1.5, 0.5))
    assert free_pieces([{**piece, "offset": [5.0, 90.0]}], tray, dice) == []  # in the tray
    assert len(free_pieces([{**piece, "offset": [12.0, 90.0]}], tray, dice)) == 1


def test_pieces_share_adds_pieces_and_leaves_the_rest_of_the_scene_as_it_was():
    for i in range(5):
        plain = sample_scene(np.random.default_rng([9, i]), 320, 240)
        with_pieces = sample_scene(np.random.default_rng([9, i]), 320, 240, pieces_share=1.0)
        assert "pieces" not in plain and 1 <= len(with_pieces.pop("pieces")) <= 5
        assert with_pieces == plain
    never = sample_scene(np.random.default_rng([9, 0]), 320, 240, pieces_share=0.0)
    assert "pieces" not in never


def test_rendered_pieces_change_the_photo_not_the_dice_far_from_them(tmp_path):
    changed = 0
    for i in range(6):
        plain = make_sample(41, i, 320, 240)
        pieces = make_sample(41, i, 320, 240, pieces_share=1.0)
        assert pieces.meta["scene"]["pieces"]
        assert [d["value"] for d in pieces.dice] == [d["value"] for d in plain.dice]
        changed += not np.array_equal(plain.image, pieces.image)
    assert changed >= 3  # some pieces land out of view, or on the dice, and are left out
    s = write_dataset(tmp_path / "d", 2, seed=41, size=(160, 120), pieces_share=1.0)
    assert s.images == 2


def test_a_piece_is_left_out_within_its_reach_and_half_a_die_of_a_die_an_edge_or_a_rim():
    """A disc of radius 0.7 reaches 1.5 with half a die: it stands clear of a die of size 1 from
    2.5 away, of the table's edge from 1.5 in, and of a tray's rim (0.5 wide) from 1.5 out."""
    disc = {**sample_pieces(np.random.default_rng(1), count=1)[0], "kind": "disc"}
    disc |= {"scale": 1.0, "shape": [0.5, 0.5, 0.5]}
    table = Surface("table", (20.0, 15.0), 40.0)
    die = [_die(0.0, 0.0)]

    def kept(surface: Surface, r: float, angle: float) -> bool:
        return len(free_pieces([{**disc, "offset": [r, angle]}], surface, die)) == 1

    assert not kept(table, 2.4, 45.0) and kept(table, 2.6, 45.0)  # beside the die
    assert not kept(table, 13.6, 90.0) and kept(table, 13.4, 90.0)  # by the long edge
    assert not kept(table, 18.6, 180.0) and kept(table, 18.4, 180.0)
    tray = Surface("tray", (20.0, 15.0), 40.0, interior=(8.0, 6.0), rim=(1.5, 0.5))
    assert not kept(tray, 7.9, 90.0) and kept(tray, 8.1, 90.0)  # by the tray's rim
    assert not kept(tray, 9.9, 0.0) and kept(tray, 10.1, 0.0)


def _hull_mask(cam, points: np.ndarray) -> np.ndarray:
    hull = cv2.convexHull(cam.project(points).astype(np.float32)).round().astype(np.int32)
    mask = cv2.fillConvexPoly(np.zeros((cam.height, cam.width), np.uint8), hull, 1)
    return cv2.erode(mask, np.ones((3, 3), np.uint8)) > 0


@pytest.mark.parametrize("kind", ["block", "house"])
@pytest.mark.parametrize("eye", [(0.0, -6.0, 4.0), (3.0, 4.0, 6.0), (0.0, 0.01, 9.0)])
def test_a_piece_is_drawn_solid_from_every_side(kind, eye):
    """A block or a house is convex: from anywhere, every pixel of its outline is drawn (its
    sides turned to the camera and its top, none left out for facing the wrong way)."""
    piece = {"kind": kind, "xy": [0.0, 0.0], "angle_deg": 20.0, "scale": 1.4}
    piece |= {"shape": [0.5, 0.5, 0.8], "color": [40.0, 160.0, 40.0]}
    cam = look_at(np.array(eye), np.array([0.0, 0.0, 0.5]), 60.0, 160, 160)
    canvas = Canvas.new(cam)
    light = {"elevation_deg": 60.0, "azimuth_deg": 30.0, "diffuse": 0.5}
    draw_piece(canvas, piece, light, 0.5)
    inside = _hull_mask(cam, piece_points(piece))
    assert inside.sum() > 200
    drawn = canvas.img.max(axis=2) > 0
    assert drawn[inside].all(), (inside & ~drawn).sum()
