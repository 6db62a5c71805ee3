"""Playing-surface geometry: polygons <-> masks, and where a die rests.

Pure numpy/OpenCV, shared by the runtime (:mod:`vision.table.surface`), the table logic and the
training of the outline model (:mod:`vision.train.surface`).

Example:
    >>> mask = outline_mask([(0, 0), (10, 0), (10, 10), (0, 10)], 20, 20)
    >>> int(mask.sum()) > 0, int(mask[15, 15])
    (True, 0)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "FULL_FRAME",
    "Outline",
    "dice_map",
    "edge_distance",
    "mask_to_outline",
    "outline_mask",
    "resting_point",
    "signed_distance",
]

Outline = list[tuple[float, float]]
"""A playing-surface polygon in pixels: ``[(x, y), ...]``."""

FULL_FRAME = 0.985
"""A surface covering at least this share of the frame has no visible edge: outline None."""


def outline_mask(
    outline: Sequence[Sequence[float]] | None,
    width: int,
    height: int,
    size: tuple[int, int] | None = None,
) -> NDArray[np.uint8]:
    """The surface mask (1 on the surface) of an outline given in ``width`` x ``height`` pixels.

    ``outline`` None means the surface fills the frame (all ones); an empty outline means no
    surface is visible (all zeros). ``size`` (height, width) rasterises at another resolution.
    """
    import cv2

    mh, mw = size if size is not None else (height, width)
    if outline is None:
        return np.ones((mh, mw), np.uint8)
    mask = np.zeros((mh, mw), np.uint8)
    if len(outline) >= 3:
        pts = np.asarray(outline, np.float64).reshape(-1, 2) * (mw / width, mh / height)
        cv2.fillPoly(mask, [np.round(pts * 16).astype(np.int32)], 1, cv2.LINE_8, shift=4)
    return mask


def dice_map(
    boxes: Sequence[Sequence[float]], width: int, height: int, size: tuple[int, int]
) -> NDArray[np.uint8]:
    """Where the dice lie, as a map of ``size`` (height, width) for a ``width`` x ``height`` photo:
    255 in a disc at each die's resting point (:func:`resting_point`) as wide as the die, 0
    elsewhere. A dice-aware outline model reads it beside the photo.

    Example:
        >>> m = dice_map([(40, 40, 60, 60)], 100, 100, (10, 10))
        >>> int(m[5, 5]), int(m[0, 0])
        (255, 0)
    """
    import cv2

    mh, mw = size
    out = np.zeros((mh, mw), np.uint8)
    sx, sy = mw / width, mh / height
    for box in boxes:
        x, y = resting_point(box)
        r = 0.5 * max(box[2] - box[0], box[3] - box[1]) * (sx + sy) / 2
        centre = (round(x * sx * 16), round(y * sy * 16))
        cv2.circle(out, centre, max(16, round(r * 16)), 255, -1, cv2.LINE_8, shift=4)
    return out


def mask_to_outline(
    prob: NDArray[np.floating],
    width: int,
    height: int,
    *,
    threshold: float = 0.5,
    epsilon: float = 0.012,
    full_frame: float = FULL_FRAME,
    convex: bool = False,
    min_area: float = 0.0,
) -> Outline | None:
    """The largest surface region of a probability map as a polygon in ``width`` x ``height`` pixels.

    Returns None when the surface covers (nearly) the whole frame, and ``[]`` when no surface is
    seen. ``epsilon`` is the simplification tolerance as a share of the contour's perimeter
    (:func:`cv2.approxPolyDP`). ``convex`` takes the region's convex hull: a flat table top,
    tray floor or board seen in perspective is convex, so notches (a pale die read as
    not-surface at the edge) and holes are mistakes of the map, not of the surface. A largest
    region under ``min_area`` of the map (a speck) counts as no surface seen.
    """
    import cv2

    if prob.ndim != 2 or prob.size == 0:
        raise ValueError(f"expected a 2-D probability map, got shape {prob.shape}")
    mask = (prob >= threshold).astype(np.uint8)
    if mask.mean() >= full_frame:
        return None
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=4)
    if n <= 1:
        return []
    best = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    if stats[best, cv2.CC_STAT_AREA] < min_area * mask.size:
        return []
    region = (labels == best).astype(np.uint8)
    # pad by one so a region touching the border closes along the frame edge
    padded = cv2.copyMakeBorder(region, 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=0)
    contours, _ = cv2.findContours(padded, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    contour = max(contours, key=cv2.contourArea)
    if convex:
        contour = cv2.convexHull(contour)
    poly = cv2.approxPolyDP(contour, epsilon * cv2.arcLength(contour, True), True)
    mh, mw = mask.shape
    pts = poly.reshape(-1, 2).astype(np.float64) - 1 + 0.5  # pixel centres
    pts[:, 0] = np.clip(pts[:, 0] * width / mw, 0, width)
    pts[:, 1] = np.clip(pts[:, 1] * height / mh, 0, height)
    # a pixel-grid contour lies half a pixel inside the edge: snap near-border points onto it
    sx, sy = width / mw, height / mh
    pts[pts[:, 0] <= sx, 0] = 0
    pts[pts[:, 0] >= width - sx, 0] = width
    pts[pts[:, 1] <= sy, 1] = 0
    pts[pts[:, 1] >= height - sy, 1] = height
    if len(pts) < 3:
        return []
    return [(round(float(x), 1), round(float(y), 1)) for x, y in pts]


def resting_point(box: Sequence[float], lift: float = 0.4) -> tuple[float, float]:
    """Where a die touches the surface in the photo: bottom-centre of its box, raised by ``lift``
    of the box height (the die's centre seen from above, its base seen from the side)."""
    x1, y1, x2, y2 = box
    return (x1 + x2) / 2, y2 - lift * (y2 - y1)


def signed_distance(outline: Sequence[Sequence[float]], point: tuple[float, float]) -> float:
    """Distance in pixels from ``point`` to the polygon's edge: positive inside, negative outside."""
    import cv2

    contour = np.asarray(outline, np.float32).reshape(-1, 1, 2)
    return float(cv2.pointPolygonTest(contour, (float(point[0]), float(point[1])), True))


def edge_distance(
    outline: Sequence[Sequence[float]], point: tuple[float, float], width: float, height: float
) -> float:
    """Distance in pixels from ``point`` to the nearest edge of the polygon that is a real edge
    of the surface, not a stretch of the ``width`` x ``height`` photo's frame (the surface goes on
    past the frame); infinite when every edge lies on the frame.

    Example:
        >>> edge_distance([(0, 0), (50, 0), (50, 100), (0, 100)], (10, 50), 100, 100)
        40.0
    """
    pts = np.asarray(outline, np.float64).reshape(-1, 2)
    a, b = pts, np.roll(pts, -1, axis=0)
    tol = 1.0
    on_frame = np.zeros(len(pts), bool)
    for axis, limit in ((0, 0.0), (0, float(width)), (1, 0.0), (1, float(height))):
        on_frame |= (np.abs(a[:, axis] - limit) <= tol) & (np.abs(b[:, axis] - limit) <= tol)
    a, b = a[~on_frame], b[~on_frame]
    if not len(a):
        return float("inf")
    p = np.asarray(point, np.float64)
    ab = b - a
    t = np.clip(((p - a) * ab).sum(1) / np.maximum((ab * ab).sum(1), 1e-12), 0.0, 1.0)
    return float(np.min(np.linalg.norm(a + t[:, None] * ab - p, axis=1)))
