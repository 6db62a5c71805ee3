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

from .camera import Camera, clip_to_rect, look_at
from .effects import motion_blur_die, post_process
from .labels import (
    COCKED_CLASS,
    COCKED_TILT_DEG,
    MIN_VISIBLE,
    die_box,
    die_corners,
    die_state,
    surface_outline,
    top_face,
)
from .physics import DiePose, Surface, simulate
from .pieces import draw_piece, free_pieces, piece_points
from .props import draw_props
from .render import Canvas, box_corners, draw_box, face_keys, shadow_polygon
from .scene import sample_scene
from .textures import draw_board, face_texture, surface_texture, wall_texture

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
    """Simulate and draw a scene made by :func:`sample_scene`."""
    W, H = scene["width"], scene["height"]
    surface = _surface(scene)
    poses = simulate(surface, scene["dice_sizes"], scene["throw"], scene["physics_seed"])
    cam, cam_meta = _camera(scene, poses, surface)
    s = scene["surface"]
    light = scene["light"]
    canvas = Canvas.new(cam)
    tx, ty = surface.table
    th = surface.table_height

    # background: wall, floor
    fwd = cam.R[2].copy()
    fwd_h = np.array([fwd[0], fwd[1], 0.0])
    if np.linalg.norm(fwd_h) < 1e-3:
        fwd_h = np.array(
            [
                math.cos(math.radians(scene["camera"]["azimuth_deg"])),
                math.sin(math.radians(scene["camera"]["azimuth_deg"])),
                0,
            ]
        )
    fwd_h /= np.linalg.norm(fwd_h)
    side = np.array([-fwd_h[1], fwd_h[0], 0.0])
    reach = max(abs(float(fwd_h[0])) * tx + abs(float(fwd_h[1])) * ty, 0.0)
    wall_d = float((np.array([0, 0, 0]) - cam.C)[:2] @ fwd_h[:2]) + reach + s["wall_distance"]
    wall_o = np.array([cam.C[0], cam.C[1], -th]) + fwd_h * wall_d
    big = 4000.0
    corners_top = np.array([[-tx, -ty, 0], [tx, -ty, 0], [tx, ty, 0], [-tx, ty, 0]], float)
    covered = canvas.covers(corners_top)  # the table top fills the frame: nothing below shows

    def wall_tex() -> np.ndarray:
        return wall_texture(_rng(scene, 1), tuple(s["wall_color"]))

    wall_poly = np.array(
        [
            wall_o - side * big,
            wall_o + side * big,
            wall_o + side * big + [0, 0, big],
            wall_o - side * big + [0, 0, big],
        ]
    )
    if not covered:
        canvas.plane(wall_poly, wall_tex, wall_o + [0, 0, 64.0], side, np.array([0, 0, -1.0]), 4.0)

    def floor_tex() -> np.ndarray:
        return surface_texture(_rng(scene, 2), s["floor_style"], tuple(s["floor_color"]), 384)

    back = np.array([cam.C[0], cam.C[1], -th]) - fwd_h * big
    floor_poly = np.array(
        [back - side * big, wall_o - side * big, wall_o + side * big, back + side * big]
    )
    if not covered:
        floor_o, ex, ey = np.array([0, 0, -th]), np.array([1.0, 0, 0]), np.array([0, 1.0, 0])
        canvas.plane(floor_poly, floor_tex, floor_o, ex, ey, s["texture_scale"] * 0.6)

    low = [i for i, p in enumerate(poses) if p.position[2] < -1.0]
    high = [i for i, p in enumerate(poses) if i not in low]
    styles = scene["dice_styles"]
    textures_cache: dict[int, _Faces] = {}

    def textures(i: int) -> tuple[_Faces, dict]:
        k = i % len(styles)
        if k not in textures_cache:
            textures_cache[k] = _Faces(styles[k])
        return textures_cache[k], styles[k]

    def shadows(
        indices: list[int], z0: float, extra: list[np.ndarray] = (), contact: bool = False
    ) -> None:
        """Cast shadows onto z = z0; ``contact``: the dark soft footprint right under each die."""
        lgt = dict(light, elevation_deg=90.0, azimuth_deg=0.0) if contact else light
        blur = 0.08 if contact else light["shadow_blur"]
        strength = min(0.7, 0.25 + light["shadow"]) if contact else light["shadow"]
        polys, sizes = [], []
        for pts in [*(die_corners(poses[i]) for i in indices), *extra]:
            if contact:
                if pts[:, 2].min() - z0 > 0.1:
                    continue
                pts = pts.mean(0) + (pts - pts.mean(0)) * 1.06
            poly = shadow_polygon(pts, lgt, z0)
            proj = cam.clip_project(poly) if poly is not None else None
            if proj is not None:
                proj = clip_to_rect(proj, -2, -2, W + 2, H + 2)
            if proj is not None and len(proj) >= 3:
                polys.append(proj)
                sizes.append(math.sqrt(max(cv2.contourArea(proj.astype(np.float32)), 1.0)))
        if not polys:
            return
        sigma = max(0.8, float(np.median(sizes)) * blur)
        pad = int(3 * sigma) + 2
        allp = np.concatenate(polys)
        x0, y0 = np.maximum(np.floor(allp.min(0)).astype(int) - pad, 0)
        x1, y1 = np.minimum(np.ceil(allp.max(0)).astype(int) + pad, [W, H])
        if x1 <= x0 or y1 <= y0:
            return
        mask = np.zeros((y1 - y0, x1 - x0), np.float32)
        for proj in polys:
            pts = np.round((proj - [x0, y0]) * 4).astype(np.int32)
            cv2.fillPoly(mask, [pts], 1.0, cv2.LINE_AA, shift=2)
        mask = cv2.GaussianBlur(mask, (0, 0), sigma)
        canvas.shade(mask, strength, (x0, y0, x1, y1))

    areas: dict[int, float] = {}
    drawn_low = low if not covered else []  # hidden under a table top that fills the frame
    shadows(drawn_low, -th)
    shadows(drawn_low, -th, contact=True)
    for i in sorted(drawn_low, key=lambda i: -cam.depth(poses[i].position[None])[0]):
        tex, st = textures(i)
        areas[i] = canvas.die(poses[i], i + 1, tex, st, light)

    # table slab: visible sides, then the top
    slab = 1.5
    edge = np.asarray(s["edge_color"], np.float32)
    for k in range(4 if not covered else 0):
        a, b = corners_top[k], corners_top[(k + 1) % 4]
        normal = np.cross(b - a, [0, 0, 1.0])
        if normal @ (cam.C - (a + b) / 2) > 0:
            quad = np.array([a, b, b - [0, 0, slab], a - [0, 0, slab]])
            canvas.flat(
                quad,
                edge * (light["ambient"] + 0.2 * abs(normal[0]) / (np.linalg.norm(normal) + 1e-9)),
            )

    def table_tex() -> np.ndarray:
        return surface_texture(_rng(scene, 3), s["table_style"], tuple(s["table_color"]), 512)

    canvas.plane(
        corners_top,
        table_tex,
        np.zeros(3),
        np.array([1.0, 0, 0]),
        np.array([0, 1.0, 0]),
        s["texture_scale"],
    )
    if s.get("board"):
        bx, by, ox, oy = s["board"]
        board_tex = np.zeros((512, 512, 3), np.float32)
        draw_board(_rng(scene, 4), board_tex)
        quad = np.array(
            [
                [ox - bx, oy - by, 0],
                [ox + bx, oy - by, 0],
                [ox + bx, oy + by, 0],
                [ox - bx, oy + by, 0],
            ]
        )
        canvas.plane(
            quad,
            board_tex,
            quad[0],
            np.array([1.0, 0, 0]),
            np.array([0, 1.0, 0]),
            512 / (2 * max(bx, by)),
        )
    if scene.get("props"):
        draw_props(canvas, scene["props"])

    rims = []
    if surface.interior is not None:
        ix, iy = surface.interior
        rh, rt = surface.rim
        tray_tex = surface_texture(_rng(scene, 5), s["tray_style"], tuple(s["tray_color"]), 384)
        quad = np.array([[-ix, -iy, 0.01], [ix, -iy, 0.01], [ix, iy, 0.01], [-ix, iy, 0.01]])
        canvas.plane(
            quad,
            tray_tex,
            np.zeros(3),
            np.array([1.0, 0, 0]),
            np.array([0, 1.0, 0]),
            s["texture_scale"] * 1.4,
        )
        rims = [box_corners(np.array(c), np.array(hh)) for c, hh in surface.rim_boxes()]
    # faces where two rim segments meet are inside the rim: never drawn
    keys = [k for r in rims for k in face_keys(r)]
    shared = {k for k in keys if keys.count(k) > 1}
    pieces = free_pieces(scene.get("pieces") or [], surface, [poses[i] for i in high])
    shadows(high, 0.0, rims + [piece_points(p) for p in pieces])
    shadows(high, 0.0, contact=True)

    # table-level objects, far to near
    items = [(float(cam.depth(poses[i].position[None])[0]), "die", i) for i in high]
    items += [(float(cam.depth(r.mean(0)[None])[0]), "rim", k) for k, r in enumerate(rims)]
    items += [
        (float(cam.depth(np.r_[p["xy"], 0.3][None])[0]), "piece", k) for k, p in enumerate(pieces)
    ]
    rim_color = np.asarray(s.get("rim_color", (0, 0, 0)), np.float32)
    ldir_z = light["ambient"]
    for _, kind, i in sorted(items, key=lambda t: -t[0]):
        if kind == "die":
            tex, st = textures(i)
            areas[i] = canvas.die(poses[i], i + 1, tex, st, light)
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
    jpeg = enc.tobytes()
    decoded = cv2.imdecode(enc, cv2.IMREAD_COLOR)

    dice = []
    for i, pose in enumerate(poses):
        value, tilt = top_face(pose.rotation)
        state = die_state(pose, surface, tilt)
        cls = COCKED_CLASS if tilt > COCKED_TILT_DEG else value - 1
        box = die_box(cam, pose)
        visible, visible_box = 0.0, None
        if areas.get(i, 0.0) > 0 and box is not None:
            x1, y1, x2, y2 = (
                int(math.floor(box[0])),
                int(math.floor(box[1])),
                int(math.ceil(box[2])),
                int(math.ceil(box[3])),
            )
            mine = canvas.ids[y1:y2, x1:x2] == i + 1
            ys, xs = np.nonzero(mine)
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
                "class": cls,
                "state": state,
                "tilt_deg": round(tilt, 2),
                "box": [round(float(v), 2) for v in box] if box is not None else None,
                "visible": round(visible, 3),
                "visible_box": visible_box,
                "labelled": bool(labelled),
                "size": round(pose.size, 3),
                "position": pose.position.round(3).tolist(),
                "style": i % len(styles),
                "moving": bool(pose.moving),
            }
        )
    meta = {
        "width": W,
        "height": H,
        "surface_kind": surface.kind,
        "outline": outline,
        "table_outline": table_outline,
        "camera": cam_meta,
        "dice": dice,
        "scene": scene,
    }
    return Sample(image=decoded, jpeg=jpeg, dice=dice, meta=meta)


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


def _rng(scene: dict, k: int) -> np.random.Generator:
    """The random stream of texture ``k`` of a scene (independent of what else is drawn)."""
    return np.random.default_rng([scene["texture_seed"], k])
