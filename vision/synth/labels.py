"""Labels from the simulated state: top face, cocked or not, on or off the playing surface,
the die's box and the playing-surface outline in the image."""

from __future__ import annotations

import math

import cv2
import numpy as np

from .camera import Camera, clip_to_rect, look_at
from .physics import DiePose, Surface
from .render import FACES

__all__ = [
    "COCKED_CLASS",
    "COCKED_TILT_DEG",
    "MIN_VISIBLE",
    "die_box",
    "die_corners",
    "die_state",
    "label_dice",
    "surface_outline",
    "surface_outlines",
    "top_face",
]

COCKED_CLASS = 6
COCKED_TILT_DEG = 12.0
"""A die whose top face leans more than this from horizontal has no clear top face."""
MIN_VISIBLE = 0.3
"""Dice less visible than this (occluded or outside the frame) get no label line."""
Outline = list[list[float]] | None
"""A polygon in pixels; None when it fills the frame, ``[]`` when it is out of view."""


def top_face(rotation: np.ndarray) -> tuple[int, float]:
    """(value of the face pointing most upward, its tilt from vertical in degrees)."""
    best, best_z = 1, -2.0
    for n_local, value in FACES:
        z = float((rotation @ n_local)[2])
        if z > best_z:
            best, best_z = value, z
    return best, math.degrees(math.acos(max(-1.0, min(1.0, best_z))))


def die_state(pose: DiePose, surface: Surface, tilt: float) -> str:
    px, py = surface.play
    x, y, z = pose.position
    on_play = abs(x) <= px and abs(y) <= py and z > -pose.size
    if not pose.in_contact:
        return "in_air"
    if not on_play:
        return "off_table"
    return "cocked" if tilt > COCKED_TILT_DEG else "table"


def die_corners(pose: DiePose) -> np.ndarray:
    h = pose.size / 2
    local = np.array([[x, y, z] for x in (-h, h) for y in (-h, h) for z in (-h, h)])
    return pose.position + local @ pose.rotation.T


def die_box(cam: Camera, pose: DiePose) -> list[float] | None:
    pts = die_corners(pose)
    if cam.depth(pts).min() < 0.2:
        return None
    px = cam.project(pts)
    x1, y1 = np.clip(px.min(0), 0, [cam.width, cam.height])
    x2, y2 = np.clip(px.max(0), 0, [cam.width, cam.height])
    if x2 - x1 < 1 or y2 - y1 < 1:
        return None
    return [float(x1), float(y1), float(x2), float(y2)]


def label_dice(
    poses: list[DiePose],
    surface: Surface,
    cam: Camera,
    ids: np.ndarray,
    areas: dict[int, float],
    n_styles: int,
) -> list[dict]:
    """The label of every die, from its simulated pose; what share of it shows is counted on the
    die-id buffer ``ids`` (die ``i`` drawn as ``i + 1``) against ``areas``, the pixels it covered
    when drawn. A die under :data:`MIN_VISIBLE` in view, or under 2 px a side, gets no label line
    (``labelled`` False)."""
    dice = []
    for i, pose in enumerate(poses):
        value, tilt = top_face(pose.rotation)
        box = die_box(cam, pose)
        visible, visible_box = 0.0, None
        if areas.get(i, 0.0) > 0 and box is not None:
            x1, y1 = int(math.floor(box[0])), int(math.floor(box[1]))
            x2, y2 = int(math.ceil(box[2])), int(math.ceil(box[3]))
            ys, xs = np.nonzero(ids[y1:y2, x1:x2] == i + 1)
            visible = min(1.0, float(len(ys)) / areas[i])
            if len(ys):
                visible_box = [
                    x1 + int(xs.min()),
                    y1 + int(ys.min()),
                    x1 + int(xs.max()) + 1,
                    y1 + int(ys.max()) + 1,
                ]
        labelled = (
            box is not None
            and visible >= MIN_VISIBLE
            and (box[2] - box[0]) >= 2
            and (box[3] - box[1]) >= 2
        )
        dice.append(
            {
                "value": value,
                "class": COCKED_CLASS if tilt > COCKED_TILT_DEG else value - 1,
                "state": die_state(pose, surface, tilt),
                "tilt_deg": round(tilt, 2),
                "box": [round(float(v), 2) for v in box] if box is not None else None,
                "visible": round(visible, 3),
                "visible_box": visible_box,
                "labelled": bool(labelled),
                "size": round(pose.size, 3),
                "position": pose.position.round(3).tolist(),
                "style": i % n_styles,
                "moving": bool(pose.moving),
            }
        )
    return dice


def surface_outline(cam: Camera, surface: Surface) -> Outline:
    """Playing-surface polygon clipped to the frame; None when it fills the frame."""
    px, py = surface.play
    poly = cam.clip_project(
        np.array([[-px, -py, 0], [px, -py, 0], [px, py, 0], [-px, py, 0]], float)
    )
    if poly is None:
        return []
    W, H = cam.width, cam.height
    poly = clip_to_rect(poly, 0, 0, W, H)
    if len(poly) < 3:
        return []
    frame_area = W * H
    area = abs(float(cv2.contourArea(poly.astype(np.float32))))
    if area >= frame_area * 0.999:
        return None
    return [[round(float(x), 1), round(float(y), 1)] for x, y in poly]


def surface_outlines(meta: dict) -> tuple[Outline, Outline]:
    """(table top outline, playing-surface outline) of a sample's sidecar, in its pixels.

    The two differ when the dice were rolled in a tray or box: the playing surface is then its
    interior and the table top the furniture it stands on. Sidecars carry ``table_outline``
    since the three-layer outline model; older ones are rebuilt from their scene and camera.
    Each outline is None when it fills the frame and ``[]`` when it is out of view.

    Raises:
        KeyError: the sidecar has neither ``table_outline`` nor a scene and camera to rebuild it.
    """
    play = meta["outline"]
    if "table_outline" in meta:
        return meta["table_outline"], play
    scene, s = meta["scene"], meta["scene"]["surface"]
    if not s.get("interior"):
        return play, play
    cs = scene["camera"]
    cam = look_at(
        np.asarray(meta["camera"]["eye"], float),
        np.asarray(meta["camera"]["target"], float),
        cs["hfov_deg"],
        int(meta["width"]),
        int(meta["height"]),
        cs["roll_deg"],
        aspect=cs.get("stretch", 1.0),
    )
    table = Surface(kind="table", table=tuple(s["table"]), table_height=s["table_height"])
    return surface_outline(cam, table), play
