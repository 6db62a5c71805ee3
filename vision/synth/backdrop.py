"""What a synthetic roll is photographed on: wall, floor, table, board, props, tray, and the
shadows the dice cast on them.

:func:`vision.synth.sample.render_scene` calls these in drawing order (painter's algorithm):
the backdrop, the dice below the table top, the table with what lies on it, the tray, then the
dice, pieces and rims at table level. Every texture draws from a random stream of its own
(:func:`texture_rng`), so what one draws never shifts another.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import cv2
import numpy as np

from .camera import clip_to_rect
from .physics import Surface
from .props import draw_props
from .render import Canvas, box_corners, shadow_polygon
from .textures import draw_board, surface_texture, wall_texture

__all__ = ["cast_shadows", "draw_backdrop", "draw_table", "draw_tray", "table_corners"]

FAR = 4000.0
"""Half-size of the wall and floor planes, in world units: past every frame's edge."""

SLAB = 1.5
"""Thickness of the table top, in world units (its visible sides)."""


def texture_rng(scene: dict[str, Any], k: int) -> np.random.Generator:
    """The random stream of texture ``k`` of a scene (independent of what else is drawn)."""
    return np.random.default_rng([scene["texture_seed"], k])


def table_corners(surface: Surface) -> np.ndarray:
    """The four corners of the table top (z = 0), in world units."""
    tx, ty = surface.table
    return np.array([[-tx, -ty, 0], [tx, -ty, 0], [tx, ty, 0], [-tx, ty, 0]], float)


def draw_backdrop(canvas: Canvas, scene: dict[str, Any], surface: Surface) -> bool:
    """Draw the wall and the floor behind and below the table; True when the table top fills
    the frame, so that nothing below it shows (and nothing is drawn)."""
    cam, s = canvas.cam, scene["surface"]
    tx, ty = surface.table
    th = surface.table_height
    if canvas.covers(table_corners(surface)):
        return True
    fwd = cam.R[2].copy()
    fwd_h = np.array([fwd[0], fwd[1], 0.0])
    if np.linalg.norm(fwd_h) < 1e-3:  # looking straight down: the wall faces the azimuth
        az = math.radians(scene["camera"]["azimuth_deg"])
        fwd_h = np.array([math.cos(az), math.sin(az), 0])
    fwd_h /= np.linalg.norm(fwd_h)
    side = np.array([-fwd_h[1], fwd_h[0], 0.0])
    reach = max(abs(float(fwd_h[0])) * tx + abs(float(fwd_h[1])) * ty, 0.0)
    wall_d = float((np.array([0, 0, 0]) - cam.C)[:2] @ fwd_h[:2]) + reach + s["wall_distance"]
    wall_o = np.array([cam.C[0], cam.C[1], -th]) + fwd_h * wall_d
    up = [0, 0, FAR]
    wall = np.array(
        [
            wall_o - side * FAR,
            wall_o + side * FAR,
            wall_o + side * FAR + up,
            wall_o - side * FAR + up,
        ]
    )

    def wall_tex() -> np.ndarray:
        return wall_texture(texture_rng(scene, 1), tuple(s["wall_color"]))

    canvas.plane(wall, wall_tex, wall_o + [0, 0, 64.0], side, np.array([0, 0, -1.0]), 4.0)

    def floor_tex() -> np.ndarray:
        return surface_texture(
            texture_rng(scene, 2), s["floor_style"], tuple(s["floor_color"]), 384
        )

    back = np.array([cam.C[0], cam.C[1], -th]) - fwd_h * FAR
    floor = np.array(
        [back - side * FAR, wall_o - side * FAR, wall_o + side * FAR, back + side * FAR]
    )
    origin, ex, ey = np.array([0, 0, -th]), np.array([1.0, 0, 0]), np.array([0, 1.0, 0])
    canvas.plane(floor, floor_tex, origin, ex, ey, s["texture_scale"] * 0.6)
    return False


def cast_shadows(
    canvas: Canvas,
    light: dict[str, Any],
    shapes: Sequence[np.ndarray],
    z0: float,
    *,
    contact: bool = False,
) -> None:
    """Darken the plane z = ``z0`` under ``shapes`` (world points of dice, rims, pieces) as
    ``light`` casts them, softly. ``contact``: the dark footprint right under each shape that
    touches the plane, lit from straight above."""
    cam = canvas.cam
    w, h = cam.width, cam.height
    lgt = dict(light, elevation_deg=90.0, azimuth_deg=0.0) if contact else light
    blur = 0.08 if contact else light["shadow_blur"]
    strength = min(0.7, 0.25 + light["shadow"]) if contact else light["shadow"]
    polys, sizes = [], []
    for pts in shapes:
        if contact:
            if pts[:, 2].min() - z0 > 0.1:
                continue
            pts = pts.mean(0) + (pts - pts.mean(0)) * 1.06
        poly = shadow_polygon(pts, lgt, z0)
        proj = cam.clip_project(poly) if poly is not None else None
        if proj is not None:
            proj = clip_to_rect(proj, -2, -2, w + 2, h + 2)
        if proj is not None and len(proj) >= 3:
            polys.append(proj)
            sizes.append(math.sqrt(max(cv2.contourArea(proj.astype(np.float32)), 1.0)))
    if not polys:
        return
    sigma = max(0.8, float(np.median(sizes)) * blur)
    pad = int(3 * sigma) + 2
    allp = np.concatenate(polys)
    x0, y0 = np.maximum(np.floor(allp.min(0)).astype(int) - pad, 0)
    x1, y1 = np.minimum(np.ceil(allp.max(0)).astype(int) + pad, [w, h])
    if x1 <= x0 or y1 <= y0:
        return
    mask = np.zeros((y1 - y0, x1 - x0), np.float32)
    for proj in polys:
        pts = np.round((proj - [x0, y0]) * 4).astype(np.int32)
        cv2.fillPoly(mask, [pts], 1.0, cv2.LINE_AA, shift=2)
    mask = cv2.GaussianBlur(mask, (0, 0), sigma)
    canvas.shade(mask, strength, (x0, y0, x1, y1))


def draw_table(canvas: Canvas, scene: dict[str, Any], surface: Surface, *, covered: bool) -> None:
    """The table: its visible sides (none when its top fills the frame), its top, and the game
    board and props lying on it."""
    cam, s, light = canvas.cam, scene["surface"], scene["light"]
    top = table_corners(surface)
    edge = np.asarray(s["edge_color"], np.float32)
    for k in range(4 if not covered else 0):
        a, b = top[k], top[(k + 1) % 4]
        normal = np.cross(b - a, [0, 0, 1.0])
        if normal @ (cam.C - (a + b) / 2) > 0:
            quad = np.array([a, b, b - [0, 0, SLAB], a - [0, 0, SLAB]])
            canvas.flat(
                quad,
                edge * (light["ambient"] + 0.2 * abs(normal[0]) / (np.linalg.norm(normal) + 1e-9)),
            )

    def table_tex() -> np.ndarray:
        return surface_texture(
            texture_rng(scene, 3), s["table_style"], tuple(s["table_color"]), 512
        )

    ex, ey = np.array([1.0, 0, 0]), np.array([0, 1.0, 0])
    canvas.plane(top, table_tex, np.zeros(3), ex, ey, s["texture_scale"])
    if s.get("board"):
        bx, by, ox, oy = s["board"]
        board_tex = np.zeros((512, 512, 3), np.float32)
        draw_board(texture_rng(scene, 4), board_tex)
        quad = np.array(
            [
                [ox - bx, oy - by, 0],
                [ox + bx, oy - by, 0],
                [ox + bx, oy + by, 0],
                [ox - bx, oy + by, 0],
            ]
        )
        canvas.plane(quad, board_tex, quad[0], ex, ey, 512 / (2 * max(bx, by)))
    if scene.get("props"):
        draw_props(canvas, scene["props"])


def draw_tray(canvas: Canvas, scene: dict[str, Any], surface: Surface) -> list[np.ndarray]:
    """The floor of a tray or box, when the scene has one; returns the corners of its rim
    segments (boxes), drawn later among the dice, far to near."""
    if surface.interior is None:
        return []
    s = scene["surface"]
    ix, iy = surface.interior
    tray_tex = surface_texture(texture_rng(scene, 5), s["tray_style"], tuple(s["tray_color"]), 384)
    quad = np.array([[-ix, -iy, 0.01], [ix, -iy, 0.01], [ix, iy, 0.01], [-ix, iy, 0.01]])
    ex, ey = np.array([1.0, 0, 0]), np.array([0, 1.0, 0])
    canvas.plane(quad, tray_tex, np.zeros(3), ex, ey, s["texture_scale"] * 1.4)
    return [box_corners(np.array(c), np.array(hh)) for c, hh in surface.rim_boxes()]
