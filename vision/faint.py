"""Faint boxes that the die check and the face classifier are both sure of.

Without a dice count the reader keeps the boxes of at least its confidence (0.25). Far dice on
busy boards (Catan tiles, a crowded pile) sometimes reach only 0.05-0.25, even at the second
look, while a crop of them is plainly a die with a plain top face. :func:`sure_faint` picks such
boxes: under the reader's confidence but at least :attr:`SureFaint.conf`, overlapping no die
already kept, held to be a die by the die check and read with a sure face by the face classifier
(and not cocked). The reader adds them marked ``faint``, so the reading asks for a check.
With a dice count, fitting the count judges faint boxes instead (:mod:`vision.count`).

Example:
    >>> SureFaint().conf, SureFaint().min_check, SureFaint().min_face
    (0.05, 0.6, 0.8)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from vision.boxes import box_iou

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["SURE_FAINT_OVERLAP", "SURE_FAINT_POOL", "SureFaint", "sure_faint"]

SURE_FAINT_OVERLAP = 0.1
"""A faint box overlapping a kept die by this IoU or more is not a die of its own (most often a
second box on the die or on its side face)."""

SURE_FAINT_POOL = 12
"""At most this many faint boxes a photo (the most confident) are asked about: the die check and
the face classifier read each one."""


@dataclass(frozen=True)
class SureFaint:
    """When a faint box is a die (the reader's ``DICECAM_SURE_FAINT_*`` settings).

    Chosen on the real training photos of roboflow-dice (872, never the eval split), photos read
    exactly: 688 without; 702 with checks of 0.8 and faces of 0.9; **716 with 0.6 and 0.8**; 714
    with 0.5 and 0.7; 710 with 0.4 and 0.6; 688 with 0.3 and 0.5 (boxes from 0.05); from 0.02 with
    0.5 and 0.7, 712. The reader card has the test figures.
    """

    conf: float = 0.05
    """The faintest box asked about (the detector's confidence)."""
    min_check: float = 0.6
    """The die check's probability that the box holds a die."""
    min_face: float = 0.8
    """The face classifier's probability of the value it reads."""

    def __post_init__(self) -> None:
        for name in ("conf", "min_check", "min_face"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"expected 0 <= {name} <= 1, got {value}")


def sure_faint(
    rgb: NDArray[np.uint8],
    boxes: NDArray[np.floating],
    conf: NDArray[np.floating],
    kept: NDArray[np.bool_],
    *,
    conf_min: float,
    sure: SureFaint,
    verify: Any,
    faces: Any,
    pool: int = SURE_FAINT_POOL,
) -> NDArray[np.intp]:
    """Indices (ascending) of the boxes to add: from ``sure.conf`` up to under ``conf_min``,
    overlapping no ``kept`` box, that the die check ``verify`` and the face classifier ``faces``
    (pixels of ``rgb``, like ``boxes``) are sure of (:class:`SureFaint`), faces not cocked.
    """
    boxes = np.asarray(boxes, np.float64).reshape(-1, 4)
    conf = np.asarray(conf, np.float64).reshape(-1)
    faint = np.flatnonzero((conf >= sure.conf) & (conf < conf_min))
    if not len(faint) or verify is None or faces is None:
        return np.zeros(0, np.intp)
    held = boxes[np.asarray(kept, bool)]
    if len(held):
        faint = np.array([k for k in faint if (box_iou(boxes[k], held) < SURE_FAINT_OVERLAP).all()])
    if not len(faint):
        return np.zeros(0, np.intp)
    faint = faint[np.argsort(-conf[faint], kind="stable")][:pool]
    faint = faint[verify.probability(rgb, boxes[faint]) >= sure.min_check]
    if not len(faint):
        return np.zeros(0, np.intp)
    values, cocked, probs = faces.classify(rgb, boxes[faint], sure=None)  # its own bar
    face = probs[np.arange(len(faint)), values - 1]
    return np.sort(faint[(face >= sure.min_face) & ~cocked]).astype(np.intp)
