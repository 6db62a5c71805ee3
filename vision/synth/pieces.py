"""Game pieces standing on the table: pawns, blocks, houses, discs (3D distractors, not labelled).

Real photos of dice games show the game's other pieces, and a dice detector trained without them
fires on them. Each piece is a stack of parts, and each part a prism or frustum: a ring of
corners at its foot, a ring at its top, side faces between them and a cap on top, shaded like
the dice and tray rims.

Example:
    >>> import numpy as np
    >>> pieces = sample_pieces(np.random.default_rng(3), count=3)
    >>> [p["kind"] in PIECE_KINDS for p in pieces]
    [True, True, True]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .physics import DiePose, Surface
from .render import Canvas, light_dir, shade_face

__all__ = [
    "PIECE_KINDS",
    "draw_piece",
    "free_pieces",
    "piece_parts",
    "piece_points",
    "sample_pieces",
]

PIECE_KINDS = ("pawn", "block", "house", "disc")

_COLOURS = [  # BGR: game-piece plastics and wood
    (200, 90, 30),
    (40, 160, 40),
    (40, 40, 200),
    (30, 200, 230),
    (150, 50, 130),
    (235, 235, 235),
    (30, 30, 30),
    (60, 120, 180),
    (90, 170, 220),
    (30, 120, 230),
    (180, 180, 60),
]


def sample_pieces(rng: np.random.Generator, *, count: int | None = None) -> list[dict[str, Any]]:
    """1 to 5 pieces (``count`` to fix it), each at an ``offset`` (distance in die edges, angle
    in degrees) from where the dice come to rest: in view, beside the roll."""
    n = int(rng.integers(1, 6)) if count is None else count
    pieces = []
    for _ in range(n):
        pieces.append(
            {
                "kind": str(rng.choice(PIECE_KINDS, p=[0.35, 0.3, 0.2, 0.15])),
                "offset": [float(rng.uniform(1.5, 8.0)), float(rng.uniform(0, 360))],
                "angle_deg": float(rng.uniform(0, 180)),
                "scale": float(rng.uniform(0.6, 1.6)),
                "color": [float(c) for c in _COLOURS[int(rng.integers(len(_COLOURS)))]],
                "shape": [float(v) for v in rng.uniform(0, 1, 3)],
            }
        )
    return pieces


def _ring(x: float, y: float, z: float, rx: float, ry: float, n: int, a: float) -> np.ndarray:
    t = a + np.arange(n) * 2 * math.pi / n
    return np.column_stack([x + rx * np.cos(t), y + ry * np.sin(t), np.full(n, z)])


def _box_ring(x: float, y: float, z: float, hx: float, hy: float, a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    pts = [(-hx, -hy), (hx, -hy), (hx, hy), (-hx, hy)]
    return np.array([[x + c * u - s * v, y + s * u + c * v, z] for u, v in pts])


def piece_parts(piece: dict[str, Any]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (foot ring, top ring) of each part of a piece, in world units (one die edge)."""
    x, y = piece["xy"]
    a, k = math.radians(piece["angle_deg"]), piece["scale"]
    s0, s1, s2 = piece["shape"]
    kind = piece["kind"]
    if kind == "pawn":  # a round foot, a tapered body, a head
        r, h = 0.45 * k, (1.3 + 0.6 * s0) * k
        return [
            (_ring(x, y, 0, r, r, 12, a), _ring(x, y, 0.15 * h, r * 0.9, r * 0.9, 12, a)),
            (
                _ring(x, y, 0.15 * h, r * 0.7, r * 0.7, 12, a),
                _ring(x, y, 0.7 * h, r * 0.3, r * 0.3, 12, a),
            ),
            (
                _ring(x, y, 0.7 * h, r * 0.45, r * 0.45, 12, a),
                _ring(x, y, 0.85 * h, r * 0.55, r * 0.55, 12, a),
            ),
            (
                _ring(x, y, 0.85 * h, r * 0.55, r * 0.55, 12, a),
                _ring(x, y, h, r * 0.2, r * 0.2, 12, a),
            ),
        ]
    if kind == "block":  # a long or flat bar: never a cube
        hx, hy = (0.9 + 1.2 * s0) * k, (0.2 + 0.15 * s1) * k
        h = (0.2 + 0.5 * s2) * k
        return [(_box_ring(x, y, 0, hx, hy, a), _box_ring(x, y, h, hx, hy, a))]
    if kind == "house":  # a box and a roof whose ridge runs along it
        hx, hy, h = (0.45 + 0.3 * s0) * k, (0.35 + 0.15 * s1) * k, (0.5 + 0.4 * s2) * k
        ridge = _box_ring(x, y, h * 1.6, hx, 0.001, a)
        return [
            (_box_ring(x, y, 0, hx, hy, a), _box_ring(x, y, h, hx, hy, a)),
            (_box_ring(x, y, h, hx, hy, a), ridge),
        ]
    r = (0.5 + 0.4 * s0) * k  # disc: a token or a chip
    return [(_ring(x, y, 0, r, r, 16, a), _ring(x, y, (0.08 + 0.15 * s1) * k, r, r, 16, a))]


def piece_points(piece: dict[str, Any]) -> np.ndarray:
    """Every corner of a piece (for its shadow)."""
    return np.concatenate([np.concatenate(part) for part in piece_parts(piece)])


def draw_piece(canvas: Canvas, piece: dict[str, Any], light: dict, ambient: float) -> None:
    """Draw the faces of a piece that face the camera, parts from the foot up."""
    color = np.asarray(piece["color"], np.float32)
    ldir = light_dir(light)
    for foot, top in piece_parts(piece):
        axis = np.r_[foot[:, :2].mean(0), 0.0]
        faces = []
        n = len(foot)
        for i in range(n):
            j = (i + 1) % n
            if np.linalg.norm(top[i] - top[j]) < 1e-6 and np.linalg.norm(foot[i] - foot[j]) < 1e-6:
                continue  # no face between two corners that coincide
            quad = np.array([foot[i], foot[j], top[j], top[i]])
            normal = np.r_[quad.mean(0)[:2] - axis[:2], 0.0]  # outward
            side = np.cross(quad[1] - quad[0], quad[3] - quad[0])
            if np.linalg.norm(side) > 1e-9:
                normal = side if side @ normal >= 0 else -side
            faces.append((quad, normal / (np.linalg.norm(normal) + 1e-9)))
        faces.append((top, np.array([0.0, 0.0, 1.0])))
        for poly, normal in faces:
            shade_face(canvas, poly, normal, color, light, ambient, ldir)


def free_pieces(
    pieces: list[dict[str, Any]], surface: Surface, dice: Sequence[DiePose]
) -> list[dict[str, Any]]:
    """The pieces placed (``xy``) at their offset from the dice's centre that stand on the table
    top clear of every die (and of the tray, if any); the others are left out."""
    if not dice:
        return []
    cx, cy = np.mean([d.position[:2] for d in dice], axis=0)
    tx, ty = surface.table
    free = []
    for piece in pieces:
        r, a = piece["offset"]
        x = float(cx + r * math.cos(math.radians(a)))
        y = float(cy + r * math.sin(math.radians(a)))
        piece = {**piece, "xy": [x, y]}
        pts = piece_points(piece)
        reach = float(np.hypot(pts[:, 0] - x, pts[:, 1] - y).max()) + 0.8  # and half a die
        if abs(x) > tx - reach or abs(y) > ty - reach:
            continue
        if surface.interior is not None:
            ix, iy = surface.interior
            rim = surface.rim[1] if surface.rim else 1.0
            if abs(x) < ix + rim + reach and abs(y) < iy + rim + reach:
                continue
        if any(math.hypot(x - d.position[0], y - d.position[1]) < reach + d.size for d in dice):
            continue
        free.append(piece)
    return free
