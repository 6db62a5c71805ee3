"""The 2.5D renderer: textured planes by homography, dice face by face, painter's algorithm.

Every die also goes into a per-pixel id buffer, so its visible fraction is counted after all
occluders (other dice, tray rims, the table over the floor) are drawn.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from .camera import NEAR, Camera, clip_to_rect
from .physics import DiePose

__all__ = [
    "BOX_QUADS",
    "FACES",
    "Canvas",
    "box_corners",
    "draw_box",
    "face_frames",
    "face_keys",
    "light_dir",
    "shade_face",
]

# local outward normal -> value; opposite faces sum to 7
FACES: list[tuple[np.ndarray, int]] = [
    (np.array([0.0, 0.0, 1.0]), 1),
    (np.array([0.0, 0.0, -1.0]), 6),
    (np.array([1.0, 0.0, 0.0]), 2),
    (np.array([-1.0, 0.0, 0.0]), 5),
    (np.array([0.0, 1.0, 0.0]), 3),
    (np.array([0.0, -1.0, 0.0]), 4),
]


def face_frames(pose: DiePose) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """(value, outward world normal, 4 world corners in texture order) for each face."""
    out = []
    h = pose.size / 2
    for n_local, value in FACES:
        u_local = np.roll(n_local, 1) if n_local[2] == 0 else np.array([1.0, 0.0, 0.0])
        u_local = np.abs(u_local)
        v_local = np.cross(u_local, n_local)
        n, u, v = pose.rotation @ n_local, pose.rotation @ u_local, pose.rotation @ v_local
        c = pose.position + n * h
        corners = np.array(
            [c - u * h - v * h, c + u * h - v * h, c + u * h + v * h, c - u * h + v * h]
        )
        out.append((value, n, corners))
    return out


@dataclass
class Canvas:
    """The image being drawn (float32 BGR), the die-id buffer and the camera."""

    cam: Camera
    img: np.ndarray
    ids: np.ndarray

    @classmethod
    def new(cls, cam: Camera) -> Canvas:
        return cls(
            cam,
            np.zeros((cam.height, cam.width, 3), np.float32),
            np.zeros((cam.height, cam.width), np.uint8),
        )

    def _mask(self, poly_px: np.ndarray) -> tuple[np.ndarray, tuple[int, int, int, int]] | None:
        h, w = self.ids.shape
        poly_px = clip_to_rect(poly_px, -2, -2, w + 2, h + 2)
        if len(poly_px) < 3:
            return None
        x0, y0 = np.floor(poly_px.min(0)).astype(int)
        x1, y1 = np.ceil(poly_px.max(0)).astype(int) + 1
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
        if x1 <= x0 or y1 <= y0:
            return None
        m = np.zeros((y1 - y0, x1 - x0), np.uint8)
        pts = np.round((poly_px - [x0, y0]) * 16).astype(np.int32)
        cv2.fillPoly(m, [pts], 255, cv2.LINE_AA, shift=4)
        return m, (x0, y0, x1, y1)

    def covers(self, poly_world: np.ndarray) -> bool:
        """True when the planar polygon, seen from the camera, fills the whole frame."""
        proj = self.cam.clip_project(poly_world)
        if proj is None:
            return False
        proj = clip_to_rect(proj, 0, 0, self.cam.width, self.cam.height)
        if len(proj) < 3:
            return False
        area = abs(float(cv2.contourArea(proj.astype(np.float32))))
        return area >= self.cam.width * self.cam.height * 0.9999

    def plane(self, poly_world: np.ndarray, tex, origin, u, v, ppu: float, gain=1.0) -> None:
        """Draw a textured planar polygon; texture pixel (a, b) is world origin + (a*u + b*v)/ppu.

        ``tex`` is an image or a callable making one (called only when the polygon shows).
        """
        proj = self.cam.clip_project(poly_world)
        if proj is None:
            return
        got = self._mask(proj)
        if got is None:
            return
        m, (x0, y0, x1, y1) = got
        if callable(tex):
            tex = tex()
        H = self.cam.plane_homography(
            np.asarray(origin, float), np.asarray(u, float) / ppu, np.asarray(v, float) / ppu
        )
        T = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1.0]]) @ H
        warped = cv2.warpPerspective(
            tex, T, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT
        )
        self._blend(warped if gain == 1.0 else warped * gain, m, (x0, y0, x1, y1), opaque_id=True)

    def flat(self, poly_world: np.ndarray, color, *, die_id: int | None = None) -> None:
        proj = self.cam.clip_project(poly_world)
        if proj is None:
            return
        got = self._mask(proj)
        if got is None:
            return
        m, roi = got
        self._blend(np.asarray(color, np.float32), m, roi, opaque_id=True)

    def _blend(
        self, src, m: np.ndarray, roi, *, opaque_id: bool, die_id: int = 0, alpha=None
    ) -> None:
        x0, y0, x1, y1 = roi
        dst = self.img[y0:y1, x0:x1]
        src = np.asarray(src, np.float32)
        if alpha is None:
            full = m == 255
            if src.ndim == 3:
                np.copyto(dst, src, where=full[..., None])
            else:
                dst[full] = src
            edge = np.nonzero((m > 0) & ~full)
        else:
            edge = np.nonzero(m)
        a = m[edge].astype(np.float32) / 255.0
        if alpha is not None:
            a *= alpha
        s_edge = src[edge] if src.ndim == 3 else src
        dst[edge] += (s_edge - dst[edge]) * a[:, None]
        if opaque_id:
            self.ids[y0:y1, x0:x1][m > 127] = die_id

    def shade(self, mask: np.ndarray, strength: float, roi: tuple[int, int, int, int]) -> None:
        """Darken the region ``roi`` by a [0, 1] mask of the same size (shadows)."""
        x0, y0, x1, y1 = roi
        dst = self.img[y0:y1, x0:x1]
        dst *= (1.0 - strength * mask)[..., None]

    def die(
        self, pose: DiePose, die_id: int, textures: dict[int, np.ndarray], style: dict, light: dict
    ) -> float:
        """Draw one die; returns its full silhouette area in pixels (before occlusion): the
        pixels its rounded outline took in the frame within its box, scaled by its hull's area
        over the part of it in the frame. The outline as drawn (a stroked, anti-aliased hull)
        is up to a pixel wider than the hull all round, a third or more of a small die's area:
        counted against the hull, a die hidden but for a fifth passed for a third visible."""
        cam = self.cam
        h = pose.size / 2
        local = np.array([[x, y, z] for x in (-h, h) for y in (-h, h) for z in (-h, h)])
        world = pose.position + local @ pose.rotation.T
        if cam.depth(world).min() < NEAR * 4:
            return 0.0
        px = cam.project(world).astype(np.float32)
        hull = cv2.convexHull(px)[:, 0, :]
        area = float(cv2.contourArea(hull))
        ldir = light_dir(light)
        body = np.asarray(style["body"], np.float32)
        opacity = float(style["opacity"])
        # silhouette with rounded corners: shrink the hull, then stroke it with a round pen
        centre = hull.mean(0)
        scale = math.sqrt(max(area, 1.0))
        r = max(0.5, 0.12 * style["corner"] / 0.18 * scale * 0.5)
        shrunk = centre + (hull - centre) * np.maximum(
            0.0, 1 - r / (np.linalg.norm(hull - centre, axis=1, keepdims=True) + 1e-6)
        )
        got = self._mask(hull)
        if got is None:
            return area
        _, (x0, y0, x1, y1) = got
        m = np.zeros((y1 - y0, x1 - x0), np.uint8)
        pts = np.round((shrunk - [x0, y0]) * 16).astype(np.int32)
        cv2.fillPoly(m, [pts], 255, cv2.LINE_AA, shift=4)
        cv2.polylines(m, [pts], True, 255, max(1, int(round(2 * r))), cv2.LINE_AA, shift=4)
        edge = np.clip(body * (light["ambient"] * style.get("edge_tone", 0.75)), 0, 255)
        self._blend(edge, m, (x0, y0, x1, y1), opaque_id=False, alpha=np.float32(opacity))
        self.ids[y0:y1, x0:x1][m > 127] = die_id
        h_img, w_img = self.ids.shape
        inside = clip_to_rect(hull, 0, 0, w_img, h_img)
        inside_area = float(cv2.contourArea(inside)) if len(inside) >= 3 else 0.0
        # counted in the die's box, as its label counts the pixels that show (the outline's
        # anti-aliased fringe reaches past it)
        bx1 = min(int(math.ceil(float(hull[:, 0].max()))), w_img) - x0
        by1 = min(int(math.ceil(float(hull[:, 1].max()))), h_img) - y0
        drawn = float(np.count_nonzero(m[: max(by1, 0), : max(bx1, 0)] > 127))
        # the part out of the frame as wide as the part in it was drawn
        silhouette = drawn * area / inside_area if inside_area > 0 and drawn else area
        tint = np.asarray(light["tint"], np.float32)
        for value, n, corners in face_frames(pose):
            centre_w = corners.mean(0)
            if n @ (cam.C - centre_w) <= 0:
                continue
            fp = cam.project(corners).astype(np.float32)
            k = light["ambient"] + light["diffuse"] * max(0.0, float(n @ ldir))
            view = cam.C - centre_w
            view /= np.linalg.norm(view)
            half = ldir + view
            half /= np.linalg.norm(half)
            spec = style["gloss"] * max(0.0, float(n @ half)) ** 20 * 255
            tex = textures[value]
            ts = tex.shape[0]
            fx0, fy0 = np.floor(fp.min(0)).astype(int)
            fx1, fy1 = np.ceil(fp.max(0)).astype(int) + 1
            fx0, fy0 = max(fx0, 0), max(fy0, 0)
            fx1, fy1 = min(fx1, cam.width), min(fy1, cam.height)
            if fx1 <= fx0 or fy1 <= fy0:
                continue
            src = np.array([[0, 0], [ts, 0], [ts, ts], [0, ts]], np.float32)
            H = cv2.getPerspectiveTransform(src, fp - np.array([fx0, fy0], np.float32))
            w = cv2.warpPerspective(
                tex,
                H,
                (fx1 - fx0, fy1 - fy0),
                flags=cv2.INTER_LINEAR,
                borderMode=cv2.BORDER_CONSTANT,
            )
            rgb = w[..., :3] * (k * tint) + spec
            a = w[..., 3]
            dst = self.img[fy0:fy1, fx0:fx1]
            dst += (rgb - dst) * a[..., None]
        return silhouette


def light_dir(light: dict) -> np.ndarray:
    el, az = math.radians(light["elevation_deg"]), math.radians(light["azimuth_deg"])
    return np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])


def shadow_polygon(points: np.ndarray, light: dict, z0: float) -> np.ndarray | None:
    """Convex outline on the plane z = z0 of the shadow cast by the given world points."""
    ldir = light_dir(light)
    t = (points[:, 2] - z0) / ldir[2]
    flat = points - t[:, None] * ldir
    hull = cv2.convexHull(flat[:, :2].astype(np.float32))[:, 0, :]
    if len(hull) < 3:
        return None
    return np.column_stack([hull, np.full(len(hull), z0)])


def box_corners(c: np.ndarray, h: np.ndarray) -> np.ndarray:
    return np.array(
        [
            [c[0] + x, c[1] + y, c[2] + z]
            for x in (-h[0], h[0])
            for y in (-h[1], h[1])
            for z in (-h[2], h[2])
        ]
    )


# faces of a box as index quads into its corner list (x, y, z bits: 4x + 2y + z)
BOX_QUADS = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]


def face_keys(corners: np.ndarray) -> list[tuple[float, ...]]:
    return [tuple(np.round(corners[list(q)].mean(0), 4).tolist()) for q in BOX_QUADS]


def draw_box(
    canvas: Canvas,
    corners: np.ndarray,
    color: np.ndarray,
    light: dict,
    ambient: float,
    skip: set = frozenset(),
) -> None:
    """Draw the faces of a box that face the camera, except those in ``skip`` (shared faces)."""
    c = corners.mean(0)
    ldir = light_dir(light)
    for q, key in zip(BOX_QUADS, face_keys(corners), strict=True):
        if key in skip:
            continue
        poly = corners[list(q)]
        n = poly.mean(0) - c
        shade_face(canvas, poly, n / (np.linalg.norm(n) + 1e-9), color, light, ambient, ldir)


def shade_face(
    canvas: Canvas,
    poly: np.ndarray,
    normal: np.ndarray,
    color: np.ndarray,
    light: dict,
    ambient: float,
    ldir: np.ndarray,
) -> None:
    """Draw a flat face (unit ``normal``) in Lambert shading, if it faces the camera."""
    if normal @ (canvas.cam.C - poly.mean(0)) <= 0:
        return
    k = ambient + light["diffuse"] * max(0.0, float(normal @ ldir))
    canvas.flat(poly, color * k)
