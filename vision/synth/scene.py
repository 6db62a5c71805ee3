"""Random scene parameters: every choice a synthetic photo depends on, as a JSON-able dict.

A scene is fully determined by its parameters (the physics and texture seeds are among them),
so the sidecar JSON records them and a subset can be chosen later by any of them.
"""

from __future__ import annotations

import colorsys
import math
from typing import Any

import numpy as np

from .pieces import sample_pieces
from .props import sample_props

__all__ = ["FACE_KINDS", "LEAN_SHARE", "check_elevation", "sample_scene"]

FACE_KINDS = ("pips", "numeral", "emblem")
"""How a die's faces are marked: pips, printed numerals, or pips with a large emblem for the 1."""

# Die body colours (BGR) with pip colours that suit them.
LIGHT_BODIES = [
    (245, 245, 245),
    (225, 238, 242),
    (200, 235, 250),
    (120, 225, 245),
    (190, 230, 200),
    (240, 220, 200),
]
DARK_BODIES = [
    (25, 25, 25),
    (40, 30, 160),
    (150, 60, 20),
    (40, 110, 30),
    (110, 40, 110),
    (30, 20, 90),
    (20, 80, 200),
    (90, 90, 90),
    (120, 40, 200),
]
DARK_PIPS = [(15, 15, 15), (30, 30, 200), (120, 40, 20), (40, 40, 40)]
LIGHT_PIPS = [(250, 250, 250), (60, 210, 240), (230, 230, 230), (200, 240, 255)]

TABLE_COLORS = {
    "felt": [(40, 110, 30), (110, 50, 20), (40, 40, 130), (60, 60, 60), (100, 70, 40)],
    "wood": [(60, 110, 170), (40, 80, 130), (90, 150, 200), (30, 50, 80), (130, 170, 200)],
    "paper": [(235, 240, 242), (215, 230, 238), (250, 250, 250)],
    "white": [(235, 235, 232), (225, 226, 230), (245, 244, 240)],
    "speckled": [(215, 212, 210), (200, 205, 210), (230, 228, 225)],
    "plain": [
        (180, 180, 180),
        (120, 90, 60),
        (60, 60, 60),
        (200, 190, 170),
        (150, 120, 90),
        (170, 200, 210),
    ],
}
STONE_COLORS = [(150, 150, 150), (200, 195, 190), (60, 60, 62), (150, 170, 190), (95, 105, 125)]
"""Base colours of a ``stone`` table top (BGR): grey, pale, black, beige and brown granite."""
STONE_SHARE = 0.0
"""The share of scenes whose table top is stone (granite, terrazzo: grains the size of pips).
0 by default, so the scenes drawn before stone tops existed stay the same."""
FLOOR_STYLES = ["wood", "tiles", "carpet", "plain"]
FLOOR_COLORS = [
    (70, 100, 140),
    (120, 130, 140),
    (60, 60, 70),
    (150, 160, 170),
    (40, 70, 110),
    (160, 170, 180),
]
WALL_COLORS = [
    (200, 210, 220),
    (180, 200, 200),
    (150, 170, 190),
    (220, 225, 230),
    (120, 140, 150),
    (90, 110, 130),
]


def _pick(rng: np.random.Generator, items: list) -> Any:
    return items[int(rng.integers(len(items)))]


def _jitter(rng: np.random.Generator, color: tuple, amount: float = 18.0) -> list[float]:
    return [float(np.clip(c + rng.normal(0, amount), 0, 255)) for c in color]


def die_style(rng: np.random.Generator) -> dict[str, Any]:
    """Body and pip colours, face kind, opacity, pip size, corner rounding of one die."""
    if rng.random() < 0.45:
        body, pip = _pick(rng, LIGHT_BODIES), _pick(rng, DARK_PIPS)
    else:
        body, pip = _pick(rng, DARK_BODIES), _pick(rng, LIGHT_PIPS + DARK_PIPS[:1] * 0)
    r = rng.random()
    kind = "numeral" if r < 0.08 else "emblem" if r < 0.16 else "pips"
    return {
        "body": _jitter(rng, body),
        "pip": _jitter(rng, pip, 10),
        "emblem": _jitter(rng, _pick(rng, [(30, 30, 200), (200, 120, 20), (30, 160, 220)]), 10),
        "kind": kind,
        "opacity": float(rng.uniform(0.55, 0.85)) if rng.random() < 0.18 else 1.0,
        "pip_radius": float(rng.uniform(0.075, 0.115)),
        "corner": float(rng.uniform(0.08, 0.26)),
        "gloss": float(rng.uniform(0.0, 0.35)),
    }


def wide_die_style(rng: np.random.Generator, style: dict[str, Any]) -> dict[str, Any]:
    """``style`` with colours, pip size and corners drawn from a far wider range than
    :func:`die_style`'s: any body colour, pips of any hue that differ from it in brightness
    by 12% or more (pale pips on pale dice too), pip radius 0.045-0.14, corners 0.02-0.32.

    Example:
        >>> st = wide_die_style(np.random.default_rng(0), die_style(np.random.default_rng(0)))
        >>> 0.045 <= st["pip_radius"] <= 0.14
        True
    """
    h, sat, val = float(rng.uniform(0, 1)), float(rng.uniform(0, 1)), float(rng.uniform(0.08, 1))
    # brighter or darker by at most the room there is (at least 0.46: val lies in 0.08-1)
    step = min(float(rng.uniform(0.12, 0.9)), max(val, 1.0 - val))
    up = val + step <= 1.0 and (val - step < 0.0 or rng.random() < 0.5)
    pip_val = val + step if up else val - step
    pip = colorsys.hsv_to_rgb(float(rng.uniform(0, 1)), float(rng.uniform(0, 0.8)), pip_val)
    body = colorsys.hsv_to_rgb(h, sat, val)
    bgr = [[float(round(c * 255.0, 1)) for c in reversed(rgb)] for rgb in (body, pip)]
    return {
        **style,
        "body": bgr[0],
        "pip": bgr[1],
        "emblem": bgr[1],
        "pip_radius": float(rng.uniform(0.045, 0.14)),
        "corner": float(rng.uniform(0.02, 0.32)),
        "gloss": float(rng.uniform(0.0, 0.5)),
    }


LEAN_SHARE = 0.3
"""The share of scenes with one extra die leaning on a neighbour or a rim."""

PIECES_SHARE = 0.0
"""The share of scenes with game pieces (pawns, blocks, houses, discs) standing on the table.
0 by default, so the scenes drawn before pieces existed stay the same."""


def sample_scene(
    rng: np.random.Generator,
    width: int = 640,
    height: int = 640,
    *,
    face_kind: str | None = None,
    lean_share: float | None = None,
    pieces_share: float | None = None,
    elevation_range: tuple[float, float] | None = None,
    wide_styles: float = 0.0,
    stone_share: float | None = None,
    **overrides: Any,
) -> dict[str, Any]:
    """Draw every parameter of one scene. ``overrides`` replace top-level keys after drawing;
    ``face_kind`` (one of :data:`FACE_KINDS`) marks every die's faces that way, where a scene
    otherwise has numerals on 8% of its dice styles and emblems on 8%. ``lean_share``: the chance
    that the scene has one more die leaning on a neighbour or a rim (a cocked die; default
    :data:`LEAN_SHARE`). ``pieces_share``: the chance that game pieces stand on the table
    (distractors, never labelled; default :data:`PIECES_SHARE`). ``elevation_range``: the
    range of the camera's elevation in degrees (default: 62-90 for 55% of scenes, 25-62 for the
    rest); trays and boxes keep at least 45-70, as their rims hide the dice from lower down.
    ``wide_styles``: the chance that the scene's dice styles come from
    :func:`wide_die_style`'s wider range. ``stone_share``: the chance that the table top is
    stone, granite or terrazzo (default :data:`STONE_SHARE`). These last options draw from
    random streams of their own, so the rest of the scene stays the same with or without them.

    Example:
        >>> s = sample_scene(np.random.default_rng(0))
        >>> 1 <= s["n_dice"] <= 13 and s["surface"]["kind"] in ("table", "tray", "box", "board")
        True
    """
    n = int(rng.choice(np.arange(1, 14), p=_count_weights()))
    kind = str(rng.choice(["table", "tray", "box", "board"], p=[0.5, 0.22, 0.08, 0.2]))
    table_style = str(rng.choice(list(TABLE_COLORS), p=[0.14, 0.2, 0.12, 0.22, 0.16, 0.16]))
    tx, ty = float(rng.uniform(12, 45)), float(rng.uniform(10, 35))
    surface: dict[str, Any] = {
        "kind": kind,
        "table": [tx, ty],
        "table_height": float(rng.uniform(38, 50)),
        "table_style": table_style,
        "table_color": _jitter(rng, _pick(rng, TABLE_COLORS[table_style]), 10),
        "edge_color": _jitter(
            rng, _pick(rng, [(40, 40, 40), (60, 90, 130), (200, 200, 200), (120, 120, 120)]), 10
        ),
        "floor_style": str(_pick(rng, FLOOR_STYLES)),
        "floor_color": _jitter(rng, _pick(rng, FLOOR_COLORS), 12),
        "wall_color": _jitter(rng, _pick(rng, WALL_COLORS), 12),
        "wall_distance": float(rng.uniform(15, 140)),
        "texture_scale": float(rng.uniform(6, 16)),
        "interior": None,
        "rim": None,
    }
    if kind in ("tray", "box"):
        ix = float(rng.uniform(5, min(16, tx - 3)))
        iy = float(rng.uniform(4, min(12, ty - 3)))
        surface["interior"] = [ix, iy]
        surface["rim"] = [
            float(rng.uniform(1.2, 2.5) if kind == "tray" else rng.uniform(2.5, 5)),
            float(rng.uniform(0.4, 1.0)),
        ]
        surface["tray_style"] = "felt" if kind == "tray" and rng.random() < 0.7 else "plain"
        surface["tray_color"] = _jitter(rng, _pick(rng, TABLE_COLORS[surface["tray_style"]]), 12)
        surface["rim_color"] = _jitter(
            rng,
            _pick(
                rng, [(30, 30, 30), (40, 70, 110), (60, 60, 120), (200, 200, 200), (80, 120, 160)]
            ),
            12,
        )
    if kind == "board":
        surface["board"] = [
            float(rng.uniform(6, min(20, tx - 1))),
            float(rng.uniform(6, min(20, ty - 1))),
            float(rng.uniform(-3, 3)),
            float(rng.uniform(-3, 3)),
        ]
    px, py = surface["interior"] or surface["table"]

    mixed = rng.random() < 0.3
    styles = (
        [die_style(rng)] if not mixed else [die_style(rng) for _ in range(int(rng.integers(2, 5)))]
    )
    base_size = float(rng.uniform(0.8, 1.25))
    sizes = [base_size * (float(rng.uniform(0.8, 1.2)) if mixed else 1.0) for _ in range(n + 1)]

    # the throw: usually into the middle of the playing surface, sometimes hard towards an edge
    edge_throw = rng.random() < (0.3 if kind in ("table", "board") else 0.15)
    ang = float(rng.uniform(0, 2 * math.pi))
    speed = float(rng.uniform(10, 45) if not edge_throw else rng.uniform(50, 110))
    start = 0.55 if edge_throw else 0.35
    origin = [
        float(-math.cos(ang) * px * rng.uniform(0, start)),
        float(-math.sin(ang) * py * rng.uniform(0, start)),
    ]
    if edge_throw:
        origin = [float(math.cos(ang) * px * 0.5), float(math.sin(ang) * py * 0.5)]
    throw = {
        "origin": origin,
        "velocity": [math.cos(ang) * speed, math.sin(ang) * speed],
        "spread": float(rng.uniform(0.8, 3.0)),
        "spin": float(rng.uniform(5, 30)),
        "height": float(rng.uniform(2, 6)),
        "catch_step": int(rng.integers(6, 40)) if rng.random() < 0.07 else None,
        "lean": bool(rng.random() < (LEAN_SHARE if lean_share is None else lean_share)),
    }
    if not throw["lean"]:
        sizes = sizes[:n]
    elevation = float(rng.choice([rng.uniform(62, 90), rng.uniform(25, 62)], p=[0.55, 0.45]))
    if kind in ("tray", "box"):  # rims hide the dice from low viewpoints
        elevation = max(elevation, float(rng.uniform(45, 70)))
    camera = {
        "elevation_deg": elevation,
        "azimuth_deg": float(rng.uniform(0, 360)),
        "hfov_deg": float(rng.uniform(48, 72)),
        "roll_deg": float(rng.normal(0, 6)),
        "zoom": float(rng.choice([rng.uniform(0.75, 1.4), rng.uniform(1.4, 3.2)], p=[0.7, 0.3])),
        "target_jitter": [float(v) for v in rng.normal(0, 0.2, 2)],
        "min_distance": float(rng.uniform(5, 9)),
        # fy/fx: phone photos (4:3 landscape or portrait) squeezed to a square by an export
        "stretch": float(rng.choice([1.0, 4 / 3, 3 / 4], p=[0.5, 0.3, 0.2])),
    }
    light = {
        "elevation_deg": float(rng.uniform(30, 85)),
        "azimuth_deg": float(rng.uniform(0, 360)),
        "ambient": float(rng.uniform(0.45, 0.7)),
        "diffuse": float(rng.uniform(0.3, 0.6)),
        "shadow": float(rng.uniform(0.2, 0.6)),
        "shadow_blur": float(rng.uniform(0.05, 0.35)),
        "tint": [float(v) for v in rng.uniform(0.88, 1.0, 3)],
        "exposure": float(
            rng.uniform(0.8, 1.15) if rng.random() < 0.85 else rng.uniform(0.55, 0.8)
        ),
        "vignette": float(rng.uniform(0, 0.45)),
        "gradient": float(rng.uniform(0, 0.35)),
        "gradient_angle_deg": float(rng.uniform(0, 360)),
        "spot": float(rng.uniform(0, 0.3)),
        "spot_xy": [float(v) for v in rng.uniform(0, 1, 2)],
    }
    post = {
        "motion_blur_px": float(rng.uniform(2, 9)) if rng.random() < 0.2 else 0.0,
        "motion_angle_deg": float(rng.uniform(0, 180)),
        "defocus_sigma": float(rng.uniform(0.4, 1.6)) if rng.random() < 0.35 else 0.0,
        "noise_sigma": float(rng.uniform(0, 7) if rng.random() < 0.85 else rng.uniform(7, 14)),
        "white_balance": [float(v) for v in rng.uniform(0.88, 1.08, 3)],
        "jpeg_quality": int(rng.integers(45, 96)),
    }
    props = sample_props(rng, (tx, ty), (px, py))
    scene = {
        "width": int(width),
        "height": int(height),
        "n_dice": n,
        "surface": surface,
        "dice_styles": styles,
        "dice_sizes": sizes,
        "throw": throw,
        "camera": camera,
        "light": light,
        "post": post,
        "props": props,
        "physics_seed": int(rng.integers(2**31)),
        "texture_seed": int(rng.integers(2**31)),
    }
    # Parameters added later come from their own stream, so the scenes other tests pick by
    # (seed, index) keep their dice, camera and surface.
    extra = np.random.default_rng([scene["physics_seed"], 1])
    post["shutter_s"] = float(1.0 / extra.uniform(50, 500))
    for style in styles:
        style["edge_tone"] = float(extra.uniform(0.6, 1.15))  # rounded edges: shade or catch light
    if extra.random() < 0.12:  # more small, far dice
        camera["zoom"] = float(camera["zoom"] * extra.uniform(1.0, 1.25))
    share = PIECES_SHARE if pieces_share is None else pieces_share
    if share > 0:  # a stream of its own: the rest of the scene is the same with or without
        own = np.random.default_rng([scene["physics_seed"], 2])
        if own.random() < share:
            scene["pieces"] = sample_pieces(own)
    if elevation_range is not None:  # its own stream too
        lo, hi = check_elevation(elevation_range)
        own = np.random.default_rng([scene["physics_seed"], 3])
        camera["elevation_deg"] = float(own.uniform(lo, hi))
        if surface["kind"] in ("tray", "box"):
            camera["elevation_deg"] = max(camera["elevation_deg"], float(own.uniform(45, 70)))
    if not 0.0 <= wide_styles <= 1.0:
        raise ValueError(f"expected wide_styles in [0, 1], got {wide_styles!r}")
    if wide_styles > 0:
        own = np.random.default_rng([scene["physics_seed"], 4])
        if own.random() < wide_styles:
            scene["dice_styles"] = styles = [wide_die_style(own, st) for st in styles]
    stone = STONE_SHARE if stone_share is None else stone_share
    if not 0.0 <= stone <= 1.0:
        raise ValueError(f"expected stone_share in [0, 1], got {stone!r}")
    if stone > 0:
        own = np.random.default_rng([scene["physics_seed"], 5])
        if own.random() < stone:
            surface["table_style"] = "stone"
            surface["table_color"] = _jitter(own, _pick(own, STONE_COLORS), 12)
            # finer grains than the texture's own scale: 1-5 mm, a quarter of a die at most
            surface["texture_scale"] = float(surface["texture_scale"] * own.uniform(1.2, 2.8))
    if face_kind is not None:
        if face_kind not in FACE_KINDS:
            raise ValueError(f"expected a face kind in {FACE_KINDS}, got {face_kind!r}")
        for style in styles:
            style["kind"] = face_kind
    scene.update(overrides)
    return scene


def check_elevation(elevation: tuple[float, float]) -> tuple[float, float]:
    lo, hi = (float(v) for v in elevation)
    if not 5.0 <= lo <= hi <= 90.0:
        raise ValueError(
            f"expected a camera elevation range LO HI with 5 <= LO <= HI <= 90 degrees, "
            f"got {elevation!r}"
        )
    return lo, hi


def _count_weights() -> np.ndarray:
    w = np.array([6, 8, 8, 7, 10, 9, 5, 4, 3, 3, 2, 2, 2], dtype=float)
    return w / w.sum()
