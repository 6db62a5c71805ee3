"""Stand-ins for the table step's learned pieces, and photos for them to look at."""

from __future__ import annotations

import numpy as np

__all__ = ["LeftHalfOutline", "table_and_floor"]


class LeftHalfOutline:
    """Stands in for the outline model: always the left half of the photo."""

    def outline(self, rgb, size, boxes=()):
        w, h = size
        return [(0, 0), (w / 2, 0), (w / 2, h), (0, h)]


def table_and_floor(height: int = 480, width: int = 640) -> np.ndarray:
    """A photo whose left half is a grey table and right half a brown floor: the edge that
    :class:`LeftHalfOutline` draws shows in it (:mod:`vision.table.edges`)."""
    photo = np.full((height, width, 3), 150, np.uint8)
    photo[:, width // 2 :] = (110, 70, 40)
    return photo
