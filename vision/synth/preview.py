"""A contact sheet of labelled synthetic samples, to check labels by eye."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import cv2
import numpy as np

from .sample import COCKED_CLASS, Sample, make_sample

__all__ = ["STATE_COLORS", "contact_sheet", "draw_labels", "preview_sheet"]

STATE_COLORS = {  # BGR
    "table": (60, 220, 60),
    "off_table": (40, 40, 240),
    "in_air": (0, 170, 255),
    "cocked": (255, 60, 255),
}


def draw_labels(sample: Sample) -> np.ndarray:
    """The sample's image with its outline (cyan), boxes coloured by state and value marks.

    Labels: the value, "C" for cocked, "OFF"/"AIR" for off-table/in-air; a dashed grey box for
    dice left out of the label file (too hidden).
    """
    im = sample.image.copy()
    outline = sample.meta.get("outline")
    if outline:
        cv2.polylines(
            im,
            [np.round(np.array(outline) * 4).astype(np.int32)],
            True,
            (255, 255, 0),
            2,
            cv2.LINE_AA,
            shift=2,
        )
    for d in sample.dice:
        if d["box"] is None:
            continue
        x1, y1, x2, y2 = (int(round(v)) for v in d["box"])
        if not d["labelled"]:
            for x in range(x1, x2, 6):
                cv2.line(im, (x, y1), (min(x + 3, x2), y1), (150, 150, 150), 1)
                cv2.line(im, (x, y2), (min(x + 3, x2), y2), (150, 150, 150), 1)
            continue
        color = STATE_COLORS.get(d["state"], (255, 255, 255))
        cv2.rectangle(im, (x1, y1), (x2, y2), color, 2)
        text = "C" if d["class"] == COCKED_CLASS else str(d["value"])
        if d["state"] == "off_table":
            text += " OFF"
        elif d["state"] == "in_air":
            text += " AIR"
        (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.6, 2)
        ty = y1 - 3 if y1 - th - 4 > 0 else y2 + th + 3
        cv2.rectangle(im, (x1, ty - th - 2), (x1 + tw + 2, ty + 2), color, -1)
        cv2.putText(
            im, text, (x1 + 1, ty), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 0, 0), 2, cv2.LINE_AA
        )
    return im


def contact_sheet(samples: Sequence[Sample], cols: int = 4, tile: int = 400) -> np.ndarray:
    """Labelled samples in a grid, each scaled to ``tile`` pixels wide."""
    if not samples:
        raise ValueError("a contact sheet needs at least one sample")
    tiles = []
    for s in samples:
        im = draw_labels(s)
        h, w = im.shape[:2]
        tiles.append(cv2.resize(im, (tile, int(round(tile * h / w))), interpolation=cv2.INTER_AREA))
    th = max(t.shape[0] for t in tiles)
    rows = math.ceil(len(tiles) / cols)
    sheet = np.full((rows * (th + 4) + 4, cols * (tile + 4) + 4, 3), 255, np.uint8)
    for k, t in enumerate(tiles):
        r, c = divmod(k, cols)
        y, x = 4 + r * (th + 4), 4 + c * (tile + 4)
        sheet[y : y + t.shape[0], x : x + tile] = t
    return sheet


def preview_sheet(
    seed: int = 0,
    n: int = 16,
    cols: int = 4,
    size: tuple[int, int] = (640, 640),
    tile: int = 400,
    start: int = 0,
    **options: Any,
) -> np.ndarray:
    """Render samples ``start .. start+n-1`` of the ``seed`` stream and lay them out labelled;
    ``options`` are the scene options of :func:`vision.synth.dataset.write_dataset`'s images
    (``face_kind``, ``lean_share``, ``elevation_range``, ...), so the sheet shows what a
    dataset of the same options holds."""
    samples = [make_sample(seed, i, *size, **options) for i in range(start, start + n)]
    return contact_sheet(samples, cols=cols, tile=tile)
