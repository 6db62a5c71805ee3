"""A pinhole camera: world -> pixels, and polygon clipping against the near plane."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Camera", "clip_to_rect", "look_at"]

NEAR = 0.05


@dataclass(slots=True)
class Camera:
    """World-to-camera rotation ``R`` (rows: right, down, forward), centre ``C``, intrinsics."""

    R: np.ndarray
    C: np.ndarray
    f: float
    cx: float
    cy: float
    width: int
    height: int
    aspect: float = 1.0
    """fy / fx: not 1 when a photo was stretched to another shape (as in exported datasets)."""

    @property
    def fy(self) -> float:
        return self.f * self.aspect

    @property
    def K(self) -> np.ndarray:
        return np.array([[self.f, 0, self.cx], [0, self.fy, self.cy], [0, 0, 1.0]])

    def to_cam(self, pts: np.ndarray) -> np.ndarray:
        """World points (N, 3) -> camera coordinates (N, 3), z along the view direction."""
        return (np.asarray(pts, dtype=np.float64) - self.C) @ self.R.T

    def project(self, pts: np.ndarray) -> np.ndarray:
        """World points (N, 3) in front of the camera -> pixels (N, 2)."""
        pc = self.to_cam(pts)
        z = np.maximum(pc[:, 2], 1e-6)
        return np.stack([self.f * pc[:, 0] / z + self.cx, self.fy * pc[:, 1] / z + self.cy], 1)

    def depth(self, pts: np.ndarray) -> np.ndarray:
        return self.to_cam(pts)[:, 2]

    def clip_project(self, poly: np.ndarray) -> np.ndarray | None:
        """Clip a planar world polygon (N, 3) to the near plane and project it; None if gone."""
        pc = self.to_cam(poly)
        out = []
        n = len(pc)
        for i in range(n):
            a, b = pc[i], pc[(i + 1) % n]
            ina, inb = a[2] >= NEAR, b[2] >= NEAR
            if ina:
                out.append(a)
            if ina != inb:
                t = (NEAR - a[2]) / (b[2] - a[2])
                out.append(a + t * (b - a))
        if len(out) < 3:
            return None
        pc = np.array(out)
        return np.stack(
            [self.f * pc[:, 0] / pc[:, 2] + self.cx, self.fy * pc[:, 1] / pc[:, 2] + self.cy], 1
        )

    def plane_homography(self, origin: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """3x3 map from plane coordinates (a, b) (point = origin + a*u + b*v) to pixels."""
        M = self.K @ np.column_stack([self.R @ u, self.R @ v, self.R @ (origin - self.C)])
        return M

    def ray_dirs(self, pixels: np.ndarray) -> np.ndarray:
        """World directions of rays through pixels (N, 2)."""
        d = np.column_stack(
            [
                (pixels[:, 0] - self.cx) / self.f,
                (pixels[:, 1] - self.cy) / self.fy,
                np.ones(len(pixels)),
            ]
        )
        return d @ self.R


def look_at(
    eye: np.ndarray,
    target: np.ndarray,
    hfov_deg: float,
    width: int,
    height: int,
    roll_deg: float = 0.0,
    aspect: float = 1.0,
) -> Camera:
    """A camera at ``eye`` looking at ``target`` with world z up, rolled by ``roll_deg``."""
    fwd = np.asarray(target, float) - np.asarray(eye, float)
    fwd /= np.linalg.norm(fwd)
    up = np.array([0.0, 0.0, 1.0])
    if abs(fwd @ up) > 0.999:
        up = np.array([0.0, 1.0, 0.0])
    right = np.cross(fwd, up)
    right /= np.linalg.norm(right)
    down = np.cross(fwd, right)
    r = math.radians(roll_deg)
    right, down = (
        math.cos(r) * right + math.sin(r) * down,
        -math.sin(r) * right + math.cos(r) * down,
    )
    R = np.stack([right, down, fwd])
    f = (width / 2) / math.tan(math.radians(hfov_deg) / 2)
    return Camera(
        R=R,
        C=np.asarray(eye, float),
        f=f,
        cx=width / 2,
        cy=height / 2,
        width=width,
        height=height,
        aspect=aspect,
    )


def clip_to_rect(poly: np.ndarray, x0: float, y0: float, x1: float, y1: float) -> np.ndarray:
    """Clip a 2D polygon (N, 2) to an axis-aligned rectangle (Sutherland-Hodgman); may be empty."""
    for axis, bound, keep_less in ((0, x0, False), (0, x1, True), (1, y0, False), (1, y1, True)):
        out = []
        n = len(poly)
        for i in range(n):
            a, b = poly[i], poly[(i + 1) % n]
            ina = a[axis] <= bound if keep_less else a[axis] >= bound
            inb = b[axis] <= bound if keep_less else b[axis] >= bound
            if ina:
                out.append(a)
            if ina != inb:
                t = (bound - a[axis]) / (b[axis] - a[axis])
                out.append(a + t * (b - a))
        poly = np.array(out) if out else np.zeros((0, 2))
        if len(poly) == 0:
            break
    return poly
