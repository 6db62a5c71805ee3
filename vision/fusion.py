"""The detector's second opinion on a photo: what its mirror image shows.

A detector trained on mirrored photos should find the same dice in a photo and in its mirror
image; where it does not, the box is doubtful. :func:`second_opinion` weighs each box of the
first look against the mirror look's boxes, as weighted box fusion does (Solovyev et al., 2019)
but one way only: a box the mirror look confirms (an overlapping box at least as sure) keeps its
confidence, and its place becomes the confidence-weighted mean of the two; a box it sees less
surely takes the mean of the two confidences, and a box it does not see at all keeps half its
own. The mirror look never adds a die nor makes one surer: on the real eval photos the boxes it
alone found, or raised over the threshold, were mostly things at the frame's edge, which the
table step then called off the table.

Example:
    >>> import numpy as np
    >>> first = np.array([[10, 10, 30, 30], [50, 50, 60, 60]], np.float64)
    >>> mirror = np.array([[12, 10, 32, 30], [200, 0, 220, 20]], np.float64)
    >>> boxes, conf = second_opinion(first, np.array([0.6, 0.4]), mirror, np.array([0.3, 0.9]))
    >>> conf.round(2).tolist(), boxes[0].round(2).tolist()
    ([0.45, 0.2], [10.67, 10.0, 30.67, 30.0])
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from vision.boxes import box_iou

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["SAME_DIE_IOU", "mirror_boxes", "second_opinion"]

SAME_DIE_IOU = 0.55
"""Boxes of the two looks overlapping at least this much (IoU) are the same die."""


def mirror_boxes(boxes: NDArray[np.floating], width: float) -> NDArray[np.float64]:
    """Boxes ``x1, y1, x2, y2`` found in the mirror image of a ``width``-wide picture, in the
    picture's own coordinates.

    Example:
        >>> mirror_boxes(np.array([[0.0, 5.0, 10.0, 15.0]]), 100).tolist()
        [[90.0, 5.0, 100.0, 15.0]]
    """
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    out = boxes.copy()
    out[:, 0] = width - boxes[:, 2]
    out[:, 2] = width - boxes[:, 0]
    return out


def second_opinion(
    boxes: NDArray[np.floating],
    conf: NDArray[np.floating],
    other_boxes: NDArray[np.floating],
    other_conf: NDArray[np.floating],
    *,
    iou: float = SAME_DIE_IOU,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Each box of the first look (N x 4, ``x1, y1, x2, y2``) and its confidence, weighed
    against the other look's boxes (M x 4, the same coordinates).

    The first look's boxes, surest first, each take the unclaimed box of the other look that
    overlaps them most (IoU at least ``iou``). Returns the N boxes in their order: each moved
    to the two boxes' confidence-weighted mean, with confidence ``min(c, (c + other) / 2)``,
    where ``other`` is 0 for a box the other look did not see.

    Raises:
        ValueError: a look's boxes and confidences differ in number.
    """
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    other_boxes = np.asarray(other_boxes, np.float64).reshape(-1, 4)
    conf = np.asarray(conf, np.float64).reshape(-1)
    other_conf = np.asarray(other_conf, np.float64).reshape(-1)
    if len(boxes) != len(conf) or len(other_boxes) != len(other_conf):
        raise ValueError(
            f"expected one confidence per box, got {len(boxes)} boxes and {len(conf)} "
            f"confidences in the first look, {len(other_boxes)} and {len(other_conf)} in the "
            "other"
        )
    out_boxes = boxes.copy()
    seen = np.zeros(len(boxes))  # the other look's confidence in each box, 0 where it missed
    claimed = np.zeros(len(other_boxes), bool)
    for i in np.argsort(-conf, kind="stable"):
        if not len(other_boxes):
            break
        overlap = np.where(claimed, -1.0, box_iou(boxes[i], other_boxes))
        j = int(np.argmax(overlap))
        if overlap[j] < iou:
            continue
        claimed[j] = True
        seen[i] = other_conf[j]
        weight = conf[i] + other_conf[j]
        if weight > 0:
            out_boxes[i] = (boxes[i] * conf[i] + other_boxes[j] * other_conf[j]) / weight
    return out_boxes, np.minimum(conf, (conf + seen) / 2)
