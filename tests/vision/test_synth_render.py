"""The renderer of synthetic photos (:mod:`vision.synth.render`) on hand-placed dice, read back
from its pixels and its die-id buffer: the face drawn on top is the one the label reads and
is not mirrored, a die's pixels fill its box, what is drawn over a die hides it, lighting
and see-through dice, and boxes (tray rims) drawn face by face."""

from __future__ import annotations

import itertools

import cv2
import numpy as np
import pytest

from vision.synth.camera import look_at
from vision.synth.labels import die_box, top_face
from vision.synth.physics import DiePose
from vision.synth.render import Canvas, box_corners, draw_box, face_keys, shadow_polygon
from vision.synth.textures import face_texture

W = H = 120
TOP = look_at(np.array([0.0, 0.0, 10.0]), np.zeros(3), 40.0, W, H)  # north up, east right
SIDE = look_at(np.array([-9.0, -6.0, 7.0]), np.zeros(3), 40.0, W, H)
LIGHT = {"ambient": 0.6, "diffuse": 0.4, "tint": [1.0, 1.0, 1.0]}
LIGHT |= {"elevation_deg": 90.0, "azimuth_deg": 0.0}
MATTE = {"body": [200.0, 200.0, 200.0], "opacity": 1.0, "corner": 0.1, "gloss": 0.0}
COLOURS = {1: (255, 0, 0), 2: (0, 255, 0), 3: (0, 0, 255), 4: (255, 255, 0), 5: (0, 255, 255)}
COLOURS[6] = (255, 0, 255)


def _rotations() -> list[np.ndarray]:
    """The 24 turns of a cube: signed permutation matrices of determinant +1."""
    out = []
    for perm in itertools.permutations(range(3)):
        for signs in itertools.product((1.0, -1.0), repeat=3):
            m = np.zeros((3, 3))
            for row, (col, sign) in enumerate(zip(perm, signs, strict=True)):
                m[row, col] = sign
            if np.linalg.det(m) > 0:
                out.append(m)
    return out


def _pose(rotation=None, position=(0.0, 0.0, 1.0), size: float = 2.0) -> DiePose:
    rot = np.eye(3) if rotation is None else rotation
    return DiePose(np.array(position, float), rot, size, in_contact=True, moving=False)


def _marked(colour) -> np.ndarray:
    """A face of one colour, opaque, with a black square in its top-left corner and a white
    one in its top-right corner (texture pixels: x right, y down)."""
    tex = np.empty((64, 64, 4), np.float32)
    tex[..., :3], tex[..., 3] = colour, 1.0
    tex[8:24, 8:24, :3] = 0.0
    tex[8:24, 40:56, :3] = 255.0
    return tex


def _centroid(mask: np.ndarray) -> np.ndarray:
    ys, xs = np.nonzero(mask)
    return np.array([xs.mean(), ys.mean()])


def test_the_face_drawn_on_top_is_the_one_labelled_and_reads_the_right_way_round():
    textures = {v: _marked(c) for v, c in COLOURS.items()}
    tops = set()
    for rotation in _rotations():
        pose = _pose(rotation)
        canvas = Canvas.new(TOP)
        canvas.img[:] = 100.0  # a grey table: neither black nor white
        assert canvas.die(pose, 1, textures, MATTE, LIGHT) > 0
        value, tilt = top_face(rotation)
        tops.add(value)
        img = canvas.img
        face = (np.abs(img - np.float32(COLOURS[value])).max(axis=2) < 2).sum()
        others = [
            (np.abs(img - np.float32(c)).max(axis=2) < 2).sum()
            for v, c in COLOURS.items()
            if v != value
        ]
        assert face > 500 and max(others) == 0, (value, rotation)
        # seen from outside, the texture's left-to-right and top-to-bottom turn the same way
        black = _centroid(img.max(axis=2) < 1)
        white = _centroid(img.min(axis=2) > 254)
        centre = _centroid(canvas.ids == 1)
        across, down = white - black, centre - black
        assert across[0] * down[1] - across[1] * down[0] > 0, ("mirrored", value, rotation)
    assert tops == set(COLOURS)


def test_opposite_faces_add_up_to_seven():
    for rotation in _rotations():
        top = top_face(rotation)[0]
        bottom = top_face(np.diag([1.0, -1.0, -1.0]) @ rotation)[0]  # turned over
        assert top + bottom == 7, rotation


@pytest.mark.parametrize("camera", [TOP, SIDE], ids=["above", "aslant"])
def test_a_die_covers_its_box_and_its_top_face_fills_it_from_above(camera):
    a = np.radians(25)
    yaw = np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1.0]])
    pose = _pose(yaw)
    textures = {v: _marked(c) for v, c in COLOURS.items()}
    canvas = Canvas.new(camera)
    area = canvas.die(pose, 3, textures, MATTE, LIGHT)
    ys, xs = np.nonzero(canvas.ids == 3)
    x1, y1, x2, y2 = die_box(camera, pose)
    assert x1 - 1 <= xs.min() and xs.max() <= x2 + 1  # the pixels lie in the box
    assert y1 - 1 <= ys.min() and ys.max() <= y2 + 1
    assert xs.min() <= x1 + 1 and xs.max() >= x2 - 1  # and reach its sides
    assert ys.min() <= y1 + 1 and ys.max() >= y2 - 1
    assert 0.8 * len(xs) < area <= len(xs)  # the area it reports is about what it covers
    if camera is TOP:  # the top face fills the outline but for its rounded rim
        top = (np.abs(canvas.img - np.float32(COLOURS[1])).max(axis=2) < 2).sum()
        assert top > 0.6 * len(xs)


def test_what_is_drawn_over_a_die_hides_it_in_the_id_buffer():
    plain = {v: _marked((200, 200, 200)) for v in COLOURS}
    for draw in ("flat", "plane", "die"):
        canvas = Canvas.new(TOP)
        area = canvas.die(_pose(), 1, plain, MATTE, LIGHT)
        shown = (canvas.ids == 1).sum()
        west = np.array([[-5.0, -5, 2.5], [0, -5, 2.5], [0, 5, 2.5], [-5, 5, 2.5]])
        if draw == "flat":
            canvas.flat(west, (10.0, 20.0, 30.0))
        elif draw == "plane":
            canvas.plane(
                west, np.full((16, 16, 3), 50, np.float32), west[0], [1, 0, 0], [0, 1, 0], 4
            )
        else:
            canvas.die(_pose(position=(-1.0, 0.0, 1.5)), 2, plain, MATTE, LIGHT)
        left = (canvas.ids == 1).sum()
        assert 0.3 * shown < left < 0.7 * shown, (draw, shown, left)  # about half left
        ys, xs = np.nonzero(canvas.ids == 1)
        assert xs.min() >= W / 2 - 1  # only its east half shows
        assert shown == pytest.approx(area, rel=0.1)


def test_a_die_at_or_behind_the_camera_is_not_drawn():
    canvas = Canvas.new(TOP)
    plain = {v: _marked((200, 200, 200)) for v in COLOURS}
    for z in (10.0, 10.5, 14.0):
        assert canvas.die(_pose(position=(0.0, 0.0, z)), 1, plain, MATTE, LIGHT) == 0.0
    assert not canvas.img.any() and not canvas.ids.any()


def _white_die(light: dict, rotation=None, **style) -> np.ndarray:
    canvas = Canvas.new(TOP)
    tex = np.ones((64, 64, 4), np.float32)
    tex[..., :3] = 200.0
    canvas.die(_pose(rotation), 1, dict.fromkeys(COLOURS, tex), MATTE | style, light)
    return canvas.img[H // 2, W // 2]  # the middle of the top face


def _tilt(deg: float) -> np.ndarray:
    """Turned about the north axis: the top face leans to the east for positive ``deg``."""
    a = np.radians(deg)
    return np.array([[np.cos(a), 0, np.sin(a)], [0, 1.0, 0], [-np.sin(a), 0, np.cos(a)]])


def test_a_face_is_lit_by_ambient_light_plus_diffuse_light_by_its_angle_to_the_sun():
    overhead = _white_die(LIGHT)
    assert overhead == pytest.approx([200.0] * 3, abs=0.5)  # 0.6 + 0.4 * cos 0
    east = LIGHT | {"elevation_deg": 60.0, "azimuth_deg": 0.0}  # the sun in the east
    assert _white_die(east, _tilt(30.0))[0] == pytest.approx(200.0, abs=1.0)  # facing it
    assert _white_die(east, _tilt(-30.0))[0] == pytest.approx(160.0, abs=1.0)  # 60 degrees off
    north = LIGHT | {"elevation_deg": 60.0, "azimuth_deg": 90.0}
    assert _white_die(north, _tilt(30.0))[0] == pytest.approx(180.0, abs=1.0)  # cos = 0.75
    # a face turned away from the sun gets the ambient light, never less
    low = east | {"elevation_deg": 10.0}
    assert _white_die(low, _tilt(-40.0))[0] == pytest.approx(200 * 0.6, abs=1.0)
    tinted = _white_die(LIGHT | {"tint": [1.0, 0.8, 0.5]})
    assert tinted == pytest.approx([200.0, 160.0, 100.0], abs=0.5)


def test_a_glossy_die_shines_where_the_light_reflects_to_the_camera():
    matte = _white_die(LIGHT)
    glossy = _white_die(LIGHT, gloss=0.2)
    assert glossy == pytest.approx(matte + 0.2 * 255, abs=1.0)
    low = LIGHT | {"elevation_deg": 20.0}
    assert _white_die(low, gloss=0.2) == pytest.approx(_white_die(low), abs=1.0)


def test_the_table_shows_through_every_pixel_of_a_see_through_die():
    canvas = Canvas.new(TOP)
    canvas.img[:] = (0.0, 0.0, 255.0)  # a red table (BGR)
    tex = np.ones((64, 64, 4), np.float32)
    tex[..., :3], tex[..., 3] = 220.0, 0.4
    see_through = MATTE | {"opacity": 0.4, "corner": 0.3}
    canvas.die(_pose(), 1, dict.fromkeys(COLOURS, tex), see_through, LIGHT)
    die = canvas.ids == 1
    assert die.sum() > 500
    red, blue = canvas.img[..., 2][die], canvas.img[..., 0][die]
    assert (red > blue + 40).all()  # red shows through, the die's corners included
    assert blue.mean() > 60  # and the die is there


def test_an_opaque_die_hides_the_table_under_every_pixel_it_covers():
    for camera in (TOP, SIDE):
        canvas = Canvas.new(camera)
        canvas.img[:] = (0.0, 0.0, 255.0)  # a red table (BGR)
        faces = {v: face_texture(v, (200.0, 200.0, 200.0), (30.0, 30.0, 30.0)) for v in COLOURS}
        canvas.die(_pose(_tilt(20.0)), 1, faces, MATTE | {"corner": 0.3}, LIGHT)
        die = cv2.erode((canvas.ids == 1).astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
        red, blue = canvas.img[..., 2][die], canvas.img[..., 0][die]
        assert die.sum() > 500 and (np.abs(red - blue) < 40).all()  # grey: no red through it


def test_a_shadow_falls_on_the_far_side_from_the_sun_as_long_as_the_sun_is_low():
    cube = box_corners(np.array([0.0, 0.0, 1.0]), np.array([1.0, 1.0, 1.0]))
    for elevation, reach in ((45.0, 2.0), (60.0, 2.0 / np.tan(np.radians(60.0)))):
        sun = {"elevation_deg": elevation, "azimuth_deg": 0.0}  # in the east
        poly = shadow_polygon(cube, sun, 0.0)
        assert poly[:, 2] == pytest.approx(0.0)  # on the table
        assert poly[:, 0].min() == pytest.approx(-1.0 - reach, abs=1e-4)  # westwards
        assert poly[:, 0].max() == pytest.approx(1.0, abs=1e-4)
        assert poly[:, 1].min() == pytest.approx(-1.0) and poly[:, 1].max() == pytest.approx(1.0)
    north = shadow_polygon(cube, {"elevation_deg": 45.0, "azimuth_deg": 90.0}, 0.0)
    assert north[:, 1].min() == pytest.approx(-3.0, abs=1e-4)  # southwards


def test_shading_darkens_by_the_strength_where_the_mask_says():
    canvas = Canvas.new(TOP)
    canvas.img[:] = 100.0
    mask = np.zeros((20, 40), np.float32)
    mask[:, :20] = 1.0
    mask[:, 20:30] = 0.5
    canvas.shade(mask, 0.4, (10, 30, 50, 50))
    region = canvas.img[30:50, 10:50, 0]
    assert region[:, :20] == pytest.approx(60.0)
    assert region[:, 20:30] == pytest.approx(80.0)
    assert region[:, 30:] == pytest.approx(100.0)
    assert (canvas.img[:30] == 100.0).all() and (canvas.img[:, 50:] == 100.0).all()


@pytest.mark.parametrize(
    "eye", [(9.0, 0.5, 7.0), (-9.0, 0.5, 7.0), (0.3, 9.0, 7.0), (0.3, -9.0, 7.0)]
)
def test_a_box_seen_from_any_side_is_drawn_whole(eye):
    camera = look_at(np.array(eye), np.array([0.5, 1.0, 0.5]), 50.0, W, H)
    corners = box_corners(np.array([0.5, 1.0, 0.5]), np.array([1.0, 2.0, 0.5]))
    canvas = Canvas.new(camera)
    draw_box(canvas, corners, np.array([100.0, 100.0, 100.0], np.float32), LIGHT, 0.6)
    filled = canvas.img.max(axis=2) > 30
    outline = cv2.convexHull(camera.project(corners).astype(np.float32))
    inside = np.zeros((H, W), np.uint8)
    cv2.fillConvexPoly(inside, np.round(outline).astype(np.int32), 1)
    assert inside.sum() > 500
    inner = cv2.erode(inside, np.ones((5, 5), np.uint8)) > 0
    assert filled[inner].all()  # no hole where a face is missing
    assert not filled[cv2.dilate(inside, np.ones((5, 5), np.uint8)) == 0].any()


def test_a_box_shows_its_faces_turned_to_the_camera_and_skips_the_ones_asked():
    corners = box_corners(np.array([0.5, 1.0, 0.5]), np.array([1.0, 2.0, 0.5]))
    assert corners.min(axis=0) == pytest.approx([-0.5, -1.0, 0.0])
    assert corners.max(axis=0) == pytest.approx([1.5, 3.0, 1.0])
    colour = np.array([100.0, 100.0, 100.0], np.float32)
    drawn = Canvas.new(TOP)
    draw_box(drawn, corners, colour, LIGHT, 0.6)
    top = TOP.project(np.array([[0.5, 1.0, 1.0]]))[0].astype(int)
    assert drawn.img[top[1], top[0]] == pytest.approx(colour * 1.0)  # lit 0.6 + 0.4
    filled = drawn.img.max(axis=2) > 50  # half or more of a pixel
    outline = cv2.convexHull(TOP.project(corners).astype(np.float32))
    assert filled.sum() == pytest.approx(cv2.contourArea(outline), rel=0.05)
    aslant = Canvas.new(SIDE)
    draw_box(aslant, corners, colour, LIGHT, 0.6)
    sides = aslant.img.max(axis=2)
    lit = {round(float(v)) for v in np.unique(sides[sides > 0])}
    assert {100, 60} <= lit  # the top, lit from above, and walls in ambient light only
    skipped = Canvas.new(TOP)
    top_key = (0.5, 1.0, 1.0)  # the middle of the top face
    assert top_key in face_keys(corners)
    draw_box(skipped, corners, colour, LIGHT, 0.6, skip={top_key})
    assert not skipped.img[top[1], top[0]].any()


def test_a_polygon_covers_the_frame_only_when_it_fills_all_of_it():
    canvas = Canvas.new(TOP)
    big = np.array([[-50.0, -50, 0], [50, -50, 0], [50, 50, 0], [-50, 50, 0]])
    half = np.array([[0.0, -50, 0], [50, -50, 0], [50, 50, 0], [0, 50, 0]])
    assert canvas.covers(big)
    assert not canvas.covers(half)
    assert not canvas.covers(big + [0.0, 0.0, 20.0])  # behind the camera
