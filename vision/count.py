"""Fit a reading to the number of dice the player says were rolled.

When the caller gives the dice count (``reader.read(photo, expected_dice=6)``; the service always
does during a turn), a photo with one die too few or one box too many is usually one faint die
or one false box away from the truth. :func:`fit_count` then keeps the ``expected`` most likely
dice among those found, or adds the most likely faint boxes (under the reader's confidence, but
held to be dice by the die check) until the count is reached. The reading says how many it added
and dropped (``Reading.added``, ``Reading.dropped``), so nothing is hidden from the player.

Example:
    >>> import numpy as np
    >>> boxes = np.array([[0, 0, 10, 10], [20, 0, 30, 10], [40, 0, 50, 10]], float)
    >>> scores = np.array([0.9, 0.2, 0.6])
    >>> kept = np.array([True, False, False])
    >>> fit_count(boxes, scores, kept, np.array([False, True, True]), 2)
    (array([0, 2]), 1, 0)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import numpy as np

from vision.boxes import box_iou

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["FIT_OVERLAP", "FIT_POOL", "DieCheck", "fit_boxes", "fit_count"]

FIT_OVERLAP = 0.5
"""A faint box that overlaps a kept die by this IoU or more is the same die, never a new one (the
reader's own NMS bar). A die half hidden behind another overlaps it by 0.3-0.5: at 0.3 it was
never added. Read as a turn (``dicecam eval --expect-rolled``) over the seven splits of the reader
card's six test sets, 0.5 instead of 0.3 busted 82 instead of 105 of 862 clean rolls by dice
missing, for 103 instead of 107 of 159 busts caught, 609 instead of 615 exact photos and 73
instead of 74 silent errors (the added dice are marked faint: the reading asks for a check); the
validation rolls (synth-s11 val, the recipe's val) went the same way (17 against 25 of 326 busted,
254 against 258 of 400 exact). The real eval photos are never read short, so never changed.
Raising both this bar and the NMS bar to 0.65 in a turn (2026-11-26, the same seven splits) busted
42 instead of 79 clean rolls but caught 86 instead of 103 busts: a second box on one die fills
the count of a die that left the photo, so 0.5 stays."""

FIT_POOL = 32
"""At most this many faint boxes (the most confident) are checked when a photo has fewer dice
than the caller says were rolled."""


class DieCheck(Protocol):
    """What :func:`fit_boxes` needs of the die check (:class:`vision.verify.VerifyModel`)."""

    threshold: float

    def probability(self, rgb: NDArray[np.uint8], boxes: NDArray[np.floating]) -> NDArray: ...


def fit_boxes(
    boxes: NDArray[np.floating],
    conf: NDArray[np.floating],
    expected: int,
    *,
    conf_min: float,
    verify: DieCheck | None,
    rgb: NDArray[np.uint8],
    fit_conf: float,
    min_verify: float,
) -> tuple[NDArray[np.intp], int, int]:
    """The reader's boxes to keep for a photo of ``expected`` dice: those at ``conf_min`` or more
    that the die check takes for dice, ranked by confidence times its probability; when too few,
    faint boxes down to ``fit_conf`` whose probability reaches ``min_verify`` (at most
    :data:`FIT_POOL`, the most confident, are checked). Without a die check no faint box is
    added. ``boxes`` are in pixels of ``rgb``. Returns what :func:`fit_count` does.
    """
    strong = conf >= conf_min
    eligible = np.zeros(len(boxes), bool)
    if verify is None:
        return fit_count(boxes, conf, strong, eligible, expected)
    prob = np.zeros(len(boxes))
    if (idx := np.flatnonzero(strong)).size:
        prob[idx] = verify.probability(rgb, boxes[idx])
    kept = strong & (prob >= verify.threshold)
    if kept.sum() < expected:
        faint = np.flatnonzero(~strong & (conf >= fit_conf))
        faint = faint[np.argsort(-conf[faint], kind="stable")][:FIT_POOL]
        if faint.size:
            prob[faint] = verify.probability(rgb, boxes[faint])
            eligible[faint] = prob[faint] >= min_verify
    return fit_count(boxes, conf * prob, kept, eligible, expected)


def fit_count(
    boxes: NDArray[np.floating],
    scores: NDArray[np.floating],
    kept: NDArray[np.bool_],
    eligible: NDArray[np.bool_],
    expected: int,
    *,
    overlap: float = FIT_OVERLAP,
) -> tuple[NDArray[np.intp], int, int]:
    """The boxes to keep so that, where the boxes allow, ``expected`` dice remain.

    Args:
        boxes: N x 4 (x1, y1, x2, y2).
        scores: how likely each box is a die (higher first).
        kept: the boxes the reader keeps without a count.
        eligible: the other boxes that may be added when dice are missing.
        expected: how many dice were rolled.
        overlap: see :data:`FIT_OVERLAP`.

    Returns:
        The indices kept (ascending), how many were added and how many dropped.

    Raises:
        ValueError: ``expected`` is negative or the arrays disagree in length.
    """
    n = len(boxes)
    if expected < 0:
        raise ValueError(f"expected a dice count >= 0, got {expected}")
    if not len(scores) == len(kept) == len(eligible) == n:
        raise ValueError(
            f"expected {n} scores and flags (one per box), got {len(scores)}, {len(kept)} "
            f"and {len(eligible)}"
        )
    order = np.argsort(-np.asarray(scores, float), kind="stable")
    keep = [int(k) for k in order if kept[k]]
    if len(keep) >= expected:
        return np.sort(np.array(keep[:expected], np.intp)), 0, len(keep) - expected
    added = 0
    for k in order:
        if len(keep) == expected:
            break
        if kept[k] or not eligible[k]:
            continue
        if (box_iou(boxes[k], boxes[keep]) < overlap).all():
            keep.append(int(k))
            added += 1
    return np.sort(np.array(keep, np.intp)), added, 0
