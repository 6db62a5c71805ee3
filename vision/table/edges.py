"""Does the photo show the edge that the learned outline draws beside a die?

The outline model sees the whole photo at 128 px, and now and then it draws an edge across a
surface that has none: a shading gradient on a speckled floor, a dim or washed-out photo. A die
it puts past such an edge busts a clean roll. A die that truly left the surface lies on
something else (the floor, the table beside a tray), which differs from the surface in colour
or in texture. So a die the learned outline calls off is asked whether its own surroundings
outside the outline differ from the surface inside the outline near it: :func:`edge_contrast`
measures both, and the table step (:class:`vision.table.TableStage`) keeps the die on the table
when neither difference shows (under :data:`EDGE_MIN_CONTRAST` and :data:`EDGE_MIN_TEXTURE`).
A calibrated boundary is the user's own and is not questioned.

Example:
    >>> import numpy as np
    >>> from vision.types import Die, Reading
    >>> rgb = np.full((240, 320, 3), 120, np.uint8)  # one grey floor: no edge anywhere
    >>> r = Reading(320, 240, [Die(3, (250, 100, 270, 120), 0.9)])
    >>> c = edge_contrast(rgb, r, r.dice, [(0, 0), (240, 0), (240, 240), (0, 240)])[0]
    >>> round(c.colour, 1), c.shows()
    (0.0, False)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from vision.table.geometry import Outline, outline_mask

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from vision.types import Die, Reading

__all__ = ["EDGE_MIN_CONTRAST", "EDGE_MIN_TEXTURE", "EdgeContrast", "edge_contrast"]

EDGE_MIN_CONTRAST = 10.0
"""L*a*b* distance (lightness counted half) between the median colours on the two sides from
which an edge shows (``DICECAM_SURFACE_EDGE_CONTRAST``; 0 questions no edge). About four times a
just noticeable difference: the bar :data:`vision.matching.CLEAR_MIN_CONTRAST` sets for pips."""

EDGE_MIN_TEXTURE = 5.0
"""Difference of the L* spread (standard deviation) on the two sides from which an edge shows
in texture alone: a plain floor beside a grained table of the same colour."""

LIGHTNESS_WEIGHT = 0.5
"""Lightness differences count half in the colour distance (as in the CMC 2:1 and CIE94 textile
formulas for whether two colours pass for one): light falls unevenly across one surface, so a
floor lighter at one end differs from itself in L* far more than in hue."""

SCALE = 320
"""The photo's longer side, in pixels, at which the two sides are compared."""

RING = (0.8, 2.0)
"""The die's own surroundings: from 0.8 to 2 die sizes from its centre, off the surface."""

REACH = 3.5
"""The surface near the die: inside the outline, within this many die sizes of its centre."""

MIN_PIXELS = 10
"""Fewer pixels than this on either side: nothing to compare (the die lies far from the
surface, or the surface around it is covered with dice)."""


@dataclass(frozen=True)
class EdgeContrast:
    """How a die's surroundings off the surface differ from the surface near it."""

    colour: float
    """Distance between the two sides' median L*a*b* colours, lightness counted half."""
    texture: float
    """Absolute difference of the two sides' L* standard deviations."""

    def shows(
        self, min_contrast: float = EDGE_MIN_CONTRAST, min_texture: float = EDGE_MIN_TEXTURE
    ) -> bool:
        """True when the photo shows an edge between the two sides, in colour or texture."""
        return self.colour >= min_contrast or self.texture >= min_texture


def edge_contrast(
    rgb: NDArray[np.uint8],
    reading: Reading,
    dice: Sequence[Die],
    outline: Outline,
    *,
    scale: int = SCALE,
) -> list[EdgeContrast | None]:
    """For each of ``dice``, the contrast between its surroundings outside ``outline`` and the
    surface inside it nearby; None where either side has too few pixels to tell.

    ``rgb`` is the reading's photo (decoded at any size); boxes and ``outline`` are in the
    reading's pixels. Every die of the reading is masked out of both sides.
    """
    import cv2

    w_px, h_px = reading.width, reading.height
    f = scale / max(w_px, h_px, 1)
    w, h = max(1, round(w_px * f)), max(1, round(h_px * f))
    small = cv2.resize(rgb, (w, h), interpolation=cv2.INTER_AREA)
    lab = cv2.cvtColor(small.astype(np.float32) * np.float32(1 / 255), cv2.COLOR_RGB2Lab)
    surface = outline_mask(outline, w_px, h_px, size=(h, w)).astype(bool)
    free = np.ones((h, w), bool)
    for d in reading.dice:
        x1, y1, x2, y2 = (v * f for v in d.box)
        m = 0.1 * (x2 - x1)
        free[max(0, int(y1 - m)) : int(y2 + m) + 1, max(0, int(x1 - m)) : int(x2 + m) + 1] = False
    out: list[EdgeContrast | None] = []
    for die in dice:
        x1, y1, x2, y2 = (v * f for v in die.box)
        size = max(x2 - x1, y2 - y1, 2.0)
        cx, cy, reach = (x1 + x2) / 2, (y1 + y2) / 2, REACH * size
        win = (
            slice(max(0, int(cy - reach)), max(0, min(h, int(cy + reach) + 2))),
            slice(max(0, int(cx - reach)), max(0, min(w, int(cx + reach) + 2))),
        )
        yy, xx = np.mgrid[win]
        r = np.hypot(xx - cx, yy - cy)
        near_free, on = free[win], surface[win]
        outside = (r >= RING[0] * size) & (r <= RING[1] * size) & near_free & ~on
        inside = (r <= reach) & near_free & on
        if outside.sum() < MIN_PIXELS or inside.sum() < MIN_PIXELS:
            out.append(None)
            continue
        a, b = lab[win][outside], lab[win][inside]
        diff = (np.median(a, 0) - np.median(b, 0)) * (LIGHTNESS_WEIGHT, 1.0, 1.0)
        colour = float(np.linalg.norm(diff))
        out.append(EdgeContrast(colour, float(abs(a[:, 0].std() - b[:, 0].std()))))
    return out
