"""One look of the detector at a photo: from its raw output to boxes in the photo's pixels.

A look is the tuple ``(boxes, confidences, values, cocked)`` of the dice the detector found, boxes
``x1, y1, x2, y2`` in model-input pixels. :class:`vision.DiceReader` takes up to three looks at a
photo: the first, the mirror image's when a die is doubtful (:func:`doubtful` and
:func:`with_mirror_look`), and a larger one when the dice are small (:func:`small_dice`).

Example:
    >>> rect_input_shape(480, 640, size=416, stride=32)
    (320, 416)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from vision.boxes import Letterbox, nms
from vision.dice_stages import take
from vision.fusion import mirror_boxes, second_opinion
from vision.io import LoadedImage
from vision.yolo_output import decode_end2end, decode_raw

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "Look",
    "decode_look",
    "doubtful",
    "mirror_outputs",
    "photo_boxes",
    "rect_input_shape",
    "small_dice",
    "with_mirror_look",
]

Look = tuple[Any, ...]
"""Boxes (N x 4, model-input pixels), confidences, values and cocked flags of one look."""


def rect_input_shape(height: int, width: int, *, size: int, stride: int) -> tuple[int, int]:
    """The (height, width) input of a dynamic model for a ``height`` x ``width`` photo: the
    photo fitted in a ``size`` square, padded only up to the next multiple of ``stride`` (as
    ultralytics' rectangular inference does)."""
    gain = min(size / height, size / width)
    nh, nw = max(round(height * gain), 1), max(round(width * gain), 1)
    return nh + (size - nh) % stride, nw + (size - nw) % stride


def decode_look(
    pred: NDArray[np.float32],
    roles: Sequence[Any],
    *,
    end2end: bool,
    floor: float,
    iou: float,
    max_det: int,
) -> Look:
    """The look of one photo's raw detector output ``pred``: boxes from ``floor`` up, after NMS
    at ``iou``, at most ``max_det``."""
    decode = decode_end2end if end2end else decode_raw
    boxes, conf, values, cocked = decode(pred, roles, conf=floor)
    if len(conf):
        keep = nms(boxes, conf, iou)[:max_det]
        boxes, conf, values, cocked = take(keep, boxes, conf, values, cocked)
    return boxes, conf, values, cocked


def doubtful(look: Look, conf: float) -> bool:
    """Whether a look holds a die the mirror look could drop: one at ``conf`` or more but under
    twice that (:func:`vision.fusion.second_opinion` can at most halve a confidence).

    Example:
        >>> doubtful((None, np.array([0.3, 0.9]), None, None), 0.25)
        True
    """
    c = look[1]
    return bool(((c >= conf) & (c < 2 * conf)).any())


def mirror_outputs(
    run: Callable[[NDArray[np.float32]], NDArray[np.float32]],
    blob: NDArray[np.float32],
    rows: Sequence[int],
    n: int,
    *,
    fixed_batch: int | None = None,
) -> list[NDArray[np.float32] | None]:
    """The detector's raw output (``run``) for the mirror images of the photos ``rows`` of the
    input ``blob``, None for the others of its ``n`` photos. A model with a ``fixed_batch`` reads
    the whole blob mirrored; a dynamic one only those rows."""
    outputs: list[NDArray[np.float32] | None] = [None] * n
    if not rows:
        return outputs
    if fixed_batch:
        flipped = run(np.ascontiguousarray(blob[..., ::-1]))
        for r in rows:
            outputs[r] = flipped[r]
        return outputs
    flipped = run(np.stack([blob[r, ..., ::-1] for r in rows]))  # one copy of each row
    for k, r in enumerate(rows):
        outputs[r] = flipped[k]
    return outputs


def with_mirror_look(
    look: Look, mirror: Look, width: int, *, floor: float, iou: float, max_det: int
) -> Look:
    """``look`` weighed against the look at the mirror image of a ``width``-wide input (its
    boxes in the mirror's own coordinates; decoded from half ``floor`` up): boxes it does not
    confirm lose up to half their confidence, and those left under ``floor`` go."""
    boxes, conf, values, cocked = look
    other, other_conf = mirror[0], mirror[1]
    boxes, conf = second_opinion(boxes, conf, mirror_boxes(other, width), other_conf)
    boxes, conf, values, cocked = take(conf >= floor, boxes, conf, values, cocked)
    if len(conf):  # moved boxes may now overlap, and the order may have changed
        keep = nms(boxes, conf, iou)[:max_det]
        boxes, conf, values, cocked = take(keep, boxes, conf, values, cocked)
    return boxes, conf, values, cocked


def photo_boxes(
    boxes: NDArray[np.floating], lb: Letterbox, img: LoadedImage
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Model-input ``boxes`` in pixels of the decoded photo ``img`` (which the crops are cut
    from), and each box's longer side in pixels of the original photo (after EXIF orientation)."""
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4).copy()
    boxes[:, [0, 2]] = (boxes[:, [0, 2]] - lb.left) / lb.gain
    boxes[:, [1, 3]] = (boxes[:, [1, 3]] - lb.top) / lb.gain
    x = boxes[:, [0, 2]].clip(0, img.width * img.scale_x) / img.scale_x
    y = boxes[:, [1, 3]].clip(0, img.height * img.scale_y) / img.scale_y
    return boxes, np.maximum(x[:, 1] - x[:, 0], y[:, 1] - y[:, 0])


def small_dice(sides: Sequence[float], width: int, height: int, *, size: int, below: float) -> bool:
    """Whether the median of ``sides`` (longer sides of the boxes found in a ``width`` x
    ``height`` photo) is under ``below`` pixels once the photo is fitted in a ``size`` square.

    Example:
        >>> small_dice([10, 12, 40], 1280, 960, size=512, below=24)
        True
    """
    if not len(sides):
        return False
    gain = size / max(width, height, 1)
    return sorted(sides)[len(sides) // 2] * gain < below
