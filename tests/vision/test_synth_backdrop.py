"""What lies around a synthetic roll (vision.synth.backdrop): the wall beyond the table, the
floor below it, the table's top and visible sides, a board, a tray's floor and rims, and the
shadows cast on them. Checked on the pixels drawn, each surface in a colour of its own."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from vision.synth.backdrop import (
    cast_shadows,
    draw_backdrop,
    draw_table,
    draw_tray,
    table_corners,
    texture_rng,
)
from vision.synth.camera import look_at
from vision.synth.physics import Surface
from vision.synth.render import Canvas, box_corners
from vision.synth.textures import surface_texture

# BGR colours far apart, so each pixel tells what surface it shows
WALL, FLOOR, TABLE, EDGE, TRAY = (
    (230, 40, 40),
    (40, 230, 40),
    (40, 40, 230),
    (0, 230, 230),
    (230, 40, 230),
)
AMBIENT = 0.6
SURFACE = Surface("table", (10.0, 8.0), 40.0)


def _scene(**surface) -> dict:
    look = {
        "wall_distance": 20.0,
        "wall_color": WALL,
        "floor_style": "plain",
        "floor_color": FLOOR,
        "texture_scale": 8.0,
        "table_style": "plain",
        "table_color": TABLE,
        "edge_color": EDGE,
        "tray_style": "plain",
        "tray_color": TRAY,
    }
    light = {"elevation_deg": 90.0, "azimuth_deg": 0.0, "ambient": AMBIENT, "shadow": 0.5}
    return {
        "texture_seed": 5,
        "camera": {"azimuth_deg": 90.0},
        "light": light | {"shadow_blur": 0.05},
        "surface": look | surface,
    }


def _oblique() -> Canvas:
    """A camera in front of the table, above it, looking down past it at the floor."""
    return Canvas.new(
        look_at(np.array([0.0, -45.0, 20.0]), np.array([0.0, 0.0, -14.0]), 70.0, 160, 120)
    )


def _shows(canvas: Canvas, point: list[float]) -> tuple[float, ...]:
    """The median colour of the 5x5 pixels where a world point is drawn."""
    x, y = np.round(canvas.cam.project(np.array([point], float))[0]).astype(int)
    assert 2 <= x < canvas.cam.width - 2 and 2 <= y < canvas.cam.height - 2, (point, x, y)
    return tuple(np.median(canvas.img[y - 2 : y + 3, x - 2 : x + 3].reshape(-1, 3), axis=0))


def _is(colour: tuple[float, ...], expected) -> bool:
    return float(np.abs(np.subtract(colour, expected)).max()) < 35


def test_table_corners_are_the_table_tops_four_corners_at_height_zero():
    corners = table_corners(SURFACE)
    assert corners.tolist() == [[-10, -8, 0], [10, -8, 0], [10, 8, 0], [-10, 8, 0]]


def test_nothing_is_drawn_behind_a_table_top_that_fills_the_frame():
    big = Surface("table", (60.0, 60.0), 40.0)
    above = Canvas.new(look_at(np.array([0.0, 0.0, 10.0]), np.zeros(3), 60.0, 120, 90))
    assert draw_backdrop(above, _scene(), big) is True
    assert not above.img.any()


def test_the_wall_stands_beyond_the_table_and_the_floor_lies_below_it():
    canvas = _oblique()
    assert draw_backdrop(canvas, _scene(), SURFACE) is False
    top = canvas.img[:10].reshape(-1, 3)
    assert np.mean(np.abs(top - WALL).max(axis=1) < 35) > 0.6  # the wall, a few things on it
    for point in ([-25.0, -10.0, -40.0], [30.0, 0.0, -40.0], [25.0, -10.0, -40.0]):
        assert _is(_shows(canvas, point), FLOOR), point
    for point in ([25.0, 24.0, -40.0], [-25.0, 24.0, -40.0]):  # the wall: 20 past the table
        assert _is(_shows(canvas, point), FLOOR), point
    assert not (canvas.ids > 0).any()  # no die id under the backdrop


def test_seen_from_straight_above_a_small_table_stands_on_the_floor():
    canvas = Canvas.new(look_at(np.array([0.0, 0.0, 60.0]), np.zeros(3), 60.0, 120, 90))
    assert draw_backdrop(canvas, _scene(), SURFACE) is False
    for point in ([25.0, 0.0, -40.0], [-25.0, 10.0, -40.0], [0.0, 20.0, -40.0], [0.0, 0.0, -40.0]):
        assert _is(_shows(canvas, point), FLOOR), point


def test_the_floors_texture_lies_on_the_floor_at_its_scale():
    """Texture pixel (a, b) shows at floor point (a, b) / ppu, table_height below the top."""
    scene = _scene(floor_style="wood")  # grain: stripes some 6 to 17 units apart
    canvas = _oblique()
    draw_backdrop(canvas, scene, SURFACE)
    ppu = scene["surface"]["texture_scale"] * 0.6
    tex = surface_texture(texture_rng(scene, 2), "wood", FLOOR, 384)
    expected, seen = [], []
    for x, y in itertools.product(np.linspace(16, 34, 10), np.linspace(1, 14, 10)):
        px, py = np.round(canvas.cam.project(np.array([[x, y, -40.0]]))[0]).astype(int)
        expected.append(tex[int(y * ppu), int(x * ppu), 1])
        seen.append(canvas.img[py, px, 1])
    assert np.corrcoef(expected, seen)[0, 1] > 0.7


def test_the_table_shows_its_top_and_the_side_facing_the_camera_only():
    canvas = _oblique()
    draw_backdrop(canvas, _scene(), SURFACE)
    draw_table(canvas, _scene(), SURFACE, covered=False)
    assert _is(_shows(canvas, [0.0, 0.0, 0.0]), TABLE)
    assert _is(_shows(canvas, [0.0, -8.0, -0.75]), np.multiply(EDGE, AMBIENT))  # the near side
    assert _is(_shows(canvas, [30.0, 0.0, -40.0]), FLOOR)  # beside it the floor
    covered = _oblique()
    draw_backdrop(covered, _scene(), SURFACE)
    draw_table(covered, _scene(), SURFACE, covered=True)  # no sides when the top fills the frame
    assert not _is(_shows(covered, [0.0, -8.0, -0.75]), np.multiply(EDGE, AMBIENT))


def test_a_board_lies_on_the_table_where_the_scene_puts_it():
    canvas = _oblique()
    draw_table(canvas, _scene(board=[3.0, 3.0, 5.0, -2.0]), SURFACE, covered=False)
    assert not _is(_shows(canvas, [5.0, -2.0, 0.0]), TABLE)
    assert _is(_shows(canvas, [-5.0, 2.0, 0.0]), TABLE)
    bare = _oblique()
    draw_table(bare, _scene(), SURFACE, covered=False)
    assert _is(_shows(bare, [5.0, -2.0, 0.0]), TABLE)


def test_props_are_drawn_on_the_table():
    prop = {
        "kind": "sheet",
        "xy": [0.0, 0.0],
        "angle_deg": 0.0,
        "color": [250, 250, 250],
        "seed": 1,
    }
    canvas = _oblique()
    draw_table(canvas, _scene() | {"props": [prop]}, SURFACE, covered=False)
    assert not _is(_shows(canvas, [0.0, 0.0, 0.0]), TABLE)


def test_a_tray_has_its_floor_inside_and_its_rims_to_draw_and_a_table_has_neither():
    tray = Surface("tray", (10.0, 8.0), 40.0, interior=(4.0, 3.0), rim=(1.5, 0.5))
    canvas = _oblique()
    draw_table(canvas, _scene(), tray, covered=False)
    rims = draw_tray(canvas, _scene(), tray)
    assert _is(_shows(canvas, [2.0, 1.0, 0.0]), TRAY) and _is(
        _shows(canvas, [-2.5, -2.0, 0.0]), TRAY
    )
    assert _is(_shows(canvas, [7.0, 0.0, 0.0]), TABLE) and _is(
        _shows(canvas, [-6.0, -6.0, 0.0]), TABLE
    )
    expected = [box_corners(np.array(c), np.array(h)) for c, h in tray.rim_boxes()]
    assert len(rims) == len(expected) > 4
    for got, want in zip(rims, expected, strict=True):
        assert np.array_equal(got, want)
    before = canvas.img.copy()
    assert draw_tray(canvas, _scene(), SURFACE) == []
    assert np.array_equal(canvas.img, before)


def _grey_canvas() -> Canvas:
    canvas = Canvas.new(look_at(np.array([0.0, 0.0, 20.0]), np.zeros(3), 60.0, 120, 120))
    canvas.img[:] = 200.0
    return canvas


def _centre(canvas: Canvas) -> float:
    return float(canvas.img[58:62, 58:62].mean())


def test_a_shadow_darkens_the_plane_under_a_shape_by_the_lights_strength():
    block = box_corners(np.array([0.0, 0.0, 1.0]), np.array([3.0, 3.0, 1.0]))  # on z = 0
    light = _scene()["light"]
    canvas = _grey_canvas()
    cast_shadows(canvas, light, [block], 0.0)
    assert _centre(canvas) == pytest.approx(200 * (1 - light["shadow"]), abs=4)
    assert canvas.img[2:6, 2:6].mean() == pytest.approx(200.0)  # nothing far from it
    contact = _grey_canvas()
    cast_shadows(contact, light, [block], 0.0, contact=True)
    assert _centre(contact) == pytest.approx(200 * (1 - min(0.7, 0.25 + light["shadow"])), abs=4)


def test_only_a_shape_touching_the_plane_casts_a_contact_shadow():
    floating = box_corners(np.array([0.0, 0.0, 3.0]), np.array([3.0, 3.0, 1.0]))  # 2 above
    canvas = _grey_canvas()
    cast_shadows(canvas, _scene()["light"], [floating], 0.0, contact=True)
    assert np.array_equal(canvas.img, np.full_like(canvas.img, 200.0))
    cast_shadows(canvas, _scene()["light"], [floating], 0.0)  # an ordinary shadow it casts
    assert _centre(canvas) < 150


def test_each_texture_of_a_scene_draws_from_its_own_repeatable_stream():
    scene = _scene()
    assert texture_rng(scene, 1).random() == texture_rng(scene, 1).random()
    assert texture_rng(scene, 1).random() != texture_rng(scene, 2).random()
    assert texture_rng(scene, 1).random() != texture_rng(scene | {"texture_seed": 6}, 1).random()
