"""One synthetic photo: physics, camera, drawing, labels, post-processing.

Labels come from the simulated state (the top face from the die's orientation), never from
pixels; only the visible fraction is counted on the rendered die-id buffer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from .backdrop import cast_shadows, draw_backdrop, draw_table, draw_tray
from .camera import Camera, look_at
from .effects import motion_blur_die, post_process
from .labels import (
    COCKED_CLASS,
    COCKED_TILT_DEG,
    MIN_VISIBLE,
    die_corners,
    label_dice,
    surface_outline,
)
from .legibility import face_contrast
from .physics import DiePose, Surface, simulate
from .pieces import draw_piece, free_pieces, piece_points
from .render import Canvas, draw_box, face_keys
from .scene import sample_scene
from .textures import face_texture

__all__ = [
    "COCKED_CLASS",
    "COCKED_TILT_DEG",
    "MIN_VISIBLE",
    "Sample",
    "make_sample",
    "render_scene",
]


@dataclass
class Sample:
    """A rendered photo (BGR uint8, as decoded from its JPEG), its JPEG bytes, labels and meta."""

    image: np.ndarray
    jpeg: bytes
    dice: list[dict[str, Any]]
    meta: dict[str, Any] = field(default_factory=dict)

    def yolo_lines(self) -> list[str]:
        """``class cx cy w h`` lines (normalised) for every labelled die."""
        h, w = self.image.shape[:2]
        out = []
        for d in self.dice:
            if d["labelled"]:
                x1, y1, x2, y2 = d["box"]
                out.append(
                    f"{d['class']} {(x1 + x2) / 2 / w:.6f} {(y1 + y2) / 2 / h:.6f} {(x2 - x1) / w:.6f} {(y2 - y1) / h:.6f}"
                )
        return out


def make_sample(
    seed: int, index: int, width: int = 640, height: int = 640, **overrides: Any
) -> Sample:
    """The ``index``-th scene of the stream with this ``seed``: same arguments, same bytes.

    Example:
        >>> s = make_sample(0, 0, 320, 240)
        >>> s.image.shape
        (240, 320, 3)
    """
    rng = np.random.default_rng([int(seed), int(index)])
    scene = sample_scene(rng, width, height, **overrides)
    return render_scene(scene)


def _surface(scene: dict) -> Surface:
    s = scene["surface"]
    return Surface(
        kind=s["kind"],
        table=tuple(s["table"]),
        table_height=s["table_height"],
        interior=tuple(s["interior"]) if s["interior"] else None,
        rim=tuple(s["rim"]) if s["rim"] else None,
    )


def _camera(scene: dict, poses: list[DiePose], surface: Surface) -> tuple[Camera, dict]:
    cs = scene["camera"]
    px, py = surface.play
    on = [
        p.position
        for p in poses
        if abs(p.position[0]) < px + 4 and abs(p.position[1]) < py + 4 and p.position[2] > -2
    ]
    pts = np.array(on if on else [p.position for p in poses] or [[0.0, 0.0, 0.0]])
    centre = pts.mean(0)
    radius = float(np.max(np.linalg.norm(pts[:, :2] - centre[:2], axis=1))) + 1.0
    target = np.array([centre[0], centre[1], min(0.0, float(centre[2]))])
    target[:2] += np.array(cs["target_jitter"]) * radius
    half = math.radians(min(cs["hfov_deg"], cs["hfov_deg"] * scene["height"] / scene["width"])) / 2
    dist = max(cs["min_distance"], radius / math.tan(half * 0.85)) * cs["zoom"]
    f = scene["width"] / 2 / math.tan(math.radians(cs["hfov_deg"]) / 2)
    dist = min(dist, f / 7.0)  # keep a die at least ~7 px wide
    el, az = math.radians(cs["elevation_deg"]), math.radians(cs["azimuth_deg"])
    eye = target + dist * np.array(
        [-math.cos(el) * math.cos(az), -math.cos(el) * math.sin(az), math.sin(el)]
    )
    eye[2] = max(eye[2], 2.5)
    cam = look_at(
        eye,
        target,
        cs["hfov_deg"],
        scene["width"],
        scene["height"],
        cs["roll_deg"],
        aspect=cs.get("stretch", 1.0),
    )
    return cam, {
        "eye": eye.round(3).tolist(),
        "target": target.round(3).tolist(),
        "distance": round(dist, 3),
        "height": round(float(eye[2]), 3),
    }


def render_scene(scene: dict[str, Any]) -> Sample:
    """Simulate and draw a scene made by :func:`sample_scene`, far to near: the backdrop, dice
    that fell below the table top, the table and what lies on it, the tray, then the dice,
    pieces and rims at table level. Labels come from the simulated poses."""
    surface = _surface(scene)
    poses = simulate(surface, scene["dice_sizes"], scene["throw"], scene["physics_seed"])
    cam, cam_meta = _camera(scene, poses, surface)
    light = scene["light"]
    canvas = Canvas.new(cam)
    covered = draw_backdrop(canvas, scene, surface)
    styles = scene["dice_styles"]
    faces = [_Faces(style) for style in styles]
    areas: dict[int, float] = {}

    def draw_die(i: int) -> None:
        areas[i] = canvas.die(
            poses[i], i + 1, faces[i % len(styles)], styles[i % len(styles)], light
        )

    low = [i for i, p in enumerate(poses) if p.position[2] < -1.0]
    high = [i for i, p in enumerate(poses) if i not in low]
    drawn_low = low if not covered else []  # hidden under a table top that fills the frame
    shapes = [die_corners(poses[i]) for i in drawn_low]
    cast_shadows(canvas, light, shapes, -surface.table_height)
    cast_shadows(canvas, light, shapes, -surface.table_height, contact=True)
    for i in sorted(drawn_low, key=lambda i: -cam.depth(poses[i].position[None])[0]):
        draw_die(i)

    draw_table(canvas, scene, surface, covered=covered)
    rims = draw_tray(canvas, scene, surface)
    # faces where two rim segments meet are inside the rim: never drawn
    keys = [k for r in rims for k in face_keys(r)]
    shared = {k for k in keys if keys.count(k) > 1}
    pieces = free_pieces(scene.get("pieces") or [], surface, [poses[i] for i in high])
    shapes = [die_corners(poses[i]) for i in high]
    cast_shadows(canvas, light, shapes + rims + [piece_points(p) for p in pieces], 0.0)
    cast_shadows(canvas, light, shapes, 0.0, contact=True)

    # table-level objects, far to near
    items = [(float(cam.depth(poses[i].position[None])[0]), "die", i) for i in high]
    items += [(float(cam.depth(r.mean(0)[None])[0]), "rim", k) for k, r in enumerate(rims)]
    items += [
        (float(cam.depth(np.r_[p["xy"], 0.3][None])[0]), "piece", k) for k, p in enumerate(pieces)
    ]
    rim_color = np.asarray(scene["surface"].get("rim_color", (0, 0, 0)), np.float32)
    ldir_z = light["ambient"]
    for _, kind, i in sorted(items, key=lambda t: -t[0]):
        if kind == "die":
            draw_die(i)
        elif kind == "piece":
            draw_piece(canvas, pieces[i], light, ldir_z)
        else:
            draw_box(canvas, rims[i], rim_color, light, ldir_z, shared)

    shutter = float(scene["post"].get("shutter_s", 0.0))
    for i, pose in enumerate(poses):
        if shutter > 0 and pose.moving and pose.velocity is not None:
            motion_blur_die(canvas, pose, i + 1, shutter)

    outline = surface_outline(cam, surface)
    table_outline = (
        surface_outline(cam, Surface("table", surface.table, surface.table_height))
        if surface.interior is not None
        else outline
    )
    img = post_process(canvas.img, scene, cam)
    ok, enc = cv2.imencode(
        ".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(scene["post"]["jpeg_quality"])]
    )
    dice = label_dice(poses, surface, cam, canvas.ids, areas, len(styles))
    inks: list[dict[int, np.ndarray]] = [{} for _ in styles]
    for i, die in enumerate(dice):  # can anyone read its top face in the photo as written?
        contrast = None
        if areas.get(i, 0.0) > 0:
            k = i % len(styles)
            contrast = face_contrast(img, cam, poses[i], i + 1, canvas.ids, inks[k], styles[k])
        die["face_contrast"] = None if contrast is None else round(contrast, 1)
    meta = {
        "width": scene["width"],
        "height": scene["height"],
        "surface_kind": surface.kind,
        "outline": outline,
        "table_outline": table_outline,
        "camera": cam_meta,
        "dice": dice,
        "scene": scene,
    }
    decoded = cv2.imdecode(enc, cv2.IMREAD_COLOR)
    return Sample(image=decoded, jpeg=enc.tobytes(), dice=dice, meta=meta)


class _Faces(dict):
    """Face textures of one die style, drawn on first use."""

    def __init__(self, style: dict) -> None:
        super().__init__()
        self.style = style

    def __missing__(self, value: int) -> np.ndarray:
        st = self.style
        tex = face_texture(
            value,
            tuple(st["body"]),
            tuple(st["pip"]),
            kind=st["kind"],
            pip_radius=st["pip_radius"],
            corner=st["corner"],
            opacity=st["opacity"],
            emblem=tuple(st["emblem"]),
        )
        self[value] = tex
        return tex
