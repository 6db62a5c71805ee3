"""Draw a reading on its photo: boxes and values, off-table dice in red, cocked ones in orange,
the dice to check in yellow (faint ones added to reach the dice count, and values the face
classifier is unsure of, marked ``5?``).

Example:
    >>> import numpy as np
    >>> from vision.types import Die, Reading
    >>> img = np.zeros((100, 100, 3), np.uint8)
    >>> out = annotate(img, Reading(100, 100, [Die(4, (10, 10, 40, 40), 0.97)]))
    >>> out.shape
    (100, 100, 3)
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from vision.atomic import atomic_write
from vision.types import Die, Reading

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["COLOURS", "annotate", "save_annotated"]

COLOURS = {  # BGR
    "table": (60, 200, 60),
    "off_table": (40, 40, 230),
    "cocked": (0, 150, 255),
    "faint": (20, 200, 240),
    "outline": (230, 200, 40),
}


def _colour(die: Die) -> tuple[int, int, int]:
    if not die.on_table:
        return COLOURS["off_table"]
    if die.cocked:
        return COLOURS["cocked"]
    return COLOURS["faint"] if die.faint or die.unsure else COLOURS["table"]


def annotate(bgr: NDArray[np.uint8], reading: Reading) -> NDArray[np.uint8]:
    """A copy of ``bgr`` (the photo the reading came from, OpenCV channel order) with the reading
    drawn on it. Line and text size follow the photo's size."""
    import cv2

    out = np.ascontiguousarray(bgr).copy()
    h, w = out.shape[:2]
    sx, sy = w / reading.width, h / reading.height
    thick = max(1, round(max(w, h) / 400))
    font_scale = max(0.4, max(w, h) / 1200)
    if reading.outline:
        pts = np.array([[x * sx, y * sy] for x, y in reading.outline], np.int32)
        cv2.polylines(out, [pts], True, COLOURS["outline"], thick, cv2.LINE_AA)
    for die in reading.dice:
        x1, y1, x2, y2 = (
            round(die.box[0] * sx),
            round(die.box[1] * sy),
            round(die.box[2] * sx),
            round(die.box[3] * sy),
        )
        colour = _colour(die)
        cv2.rectangle(out, (x1, y1), (x2, y2), colour, thick, cv2.LINE_AA)
        label = "?" if die.cocked else f"{die.value}?" if die.unsure else str(die.value)
        label += "" if die.on_table else " off"
        label += f" {die.confidence:.2f}"
        (tw, th), base = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, font_scale, thick)
        ty = y1 - 2 if y1 - th - base - 2 >= 0 else min(h - 1, y2 + th + 2)
        cv2.rectangle(out, (x1, ty - th - base), (x1 + tw + 2, ty + base - 2), colour, -1)
        cv2.putText(
            out,
            label,
            (x1 + 1, ty - 2),
            cv2.FONT_HERSHEY_SIMPLEX,
            font_scale,
            (255, 255, 255),
            thick,
            cv2.LINE_AA,
        )
    summary = " ".join(map(str, reading.values)) or "no dice"
    if reading.bust:
        summary += "  BUST"
    for colour, width in (((0, 0, 0), thick + 2), ((255, 255, 255), thick)):  # outlined
        cv2.putText(
            out,
            summary,
            (8, round(30 * font_scale / 0.6)),
            cv2.FONT_HERSHEY_SIMPLEX,
            font_scale * 1.2,
            colour,
            width,
            cv2.LINE_AA,
        )
    return out


def save_annotated(bgr: NDArray[np.uint8], reading: Reading, path: str | Path) -> Path:
    """Draw ``reading`` on ``bgr`` and write it to ``path`` (format from the suffix; JPEG for
    none).

    Raises:
        ValueError: a suffix OpenCV writes no image format for (``.jpg``, ``.png``, ...).
        OSError: the file cannot be written.
    """
    import cv2

    path = Path(path)
    try:
        ok, data = cv2.imencode(path.suffix or ".jpg", annotate(bgr, reading))
    except cv2.error:  # no encoder for the suffix: OpenCV raises rather than returns False
        ok = False
    if not ok:
        raise ValueError(
            f"cannot encode an image as {path.suffix!r}: expected an image suffix such as "
            f"'.jpg' or '.png', got {path}"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, data.tobytes())  # a killed run leaves no half photo
    return path
