"""From the detector's boxes to the dice of a reading.

The reader (:class:`vision.DiceReader`) decodes the detector's output into boxes, then, per photo:

1. :func:`choose_boxes` keeps the boxes that are dice: those over the reader's confidence that
   the die check holds to be dice, and faint ones the die check and the face classifier are both
   sure of (:mod:`vision.faint`), or, with the dice count given, the likeliest to that count
   (:mod:`vision.count`);
2. :func:`read_faces` reads each die's value with the face classifier, flags the values it is
   unsure of, and sets the cocked flags with the cocked-die model;
3. :func:`build_dice` turns the arrays into :class:`vision.types.Die` objects, left to right.

:func:`photo_dice` runs the three, with the stages and settings of a :class:`DiceStages`.

Example:
    >>> import numpy as np
    >>> boxes = np.array([[50.0, 0, 60, 10], [0, 0, 10, 10]])
    >>> reads = FaceReads(np.array([2, 5]), np.zeros(2, bool), np.zeros(2, bool))
    >>> [d.value for d in build_dice(boxes, np.array([0.9, 0.8]), reads)]
    [5, 2]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from vision.count import fit_boxes
from vision.faint import SureFaint, sure_faint
from vision.types import Die

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from vision.io import LoadedImage

__all__ = [
    "DiceStages",
    "FaceReads",
    "build_dice",
    "choose_boxes",
    "photo_dice",
    "read_faces",
    "take",
]


class DiceStages(Protocol):
    """The models and settings :func:`photo_dice` reads dice with (a :class:`vision.DiceReader`
    has them all)."""

    conf: float
    """Detector confidence a box needs to be a die (unless a dice count adds it)."""
    verify: Any
    """The die check (:class:`vision.verify.VerifyModel`) or None."""
    faces: Any
    """The face classifier (:class:`vision.faces.FaceClassifier`) or None."""
    cocked: Any
    """The cocked-die model (:class:`vision.cocked.CockedModel`) or None."""
    unsure_below: float
    fit_conf: float
    fit_min_verify: float
    sure_faint: SureFaint | None
    """When a faint box is a die without a dice count (None: never)."""


def take(keep: NDArray[Any], *arrays: NDArray[Any]) -> tuple[NDArray[Any], ...]:
    """Each of ``arrays`` indexed by ``keep`` (a mask or indices), in order."""
    return tuple(a[keep] for a in arrays)


def choose_boxes(
    rgb: NDArray[np.uint8],
    boxes: NDArray[np.floating],
    conf: NDArray[np.floating],
    *others: NDArray[Any],
    conf_min: float,
    verify: Any = None,
    expected: int | None = None,
    fit_conf: float = 0.02,
    fit_min_verify: float = 0.3,
    faces: Any = None,
    sure: SureFaint | None = None,
) -> tuple[tuple[NDArray[Any], ...], int, int]:
    """The boxes (with ``conf`` and any ``others`` that run beside them) that are dice, and how
    many were added and left out to reach ``expected``.

    Without ``expected``: the boxes of at least ``conf_min`` that the die check ``verify`` (when
    given) does not drop, and with ``sure`` the faint boxes that the die check and the face
    classifier ``faces`` are both sure of (:func:`vision.faint.sure_faint`). With it:
    :func:`vision.count.fit_boxes` chooses, down to ``fit_conf``.
    """
    if expected is not None:
        keep, added, dropped = fit_boxes(
            boxes,
            conf,
            int(expected),
            conf_min=conf_min,
            verify=verify,
            rgb=rgb,
            fit_conf=fit_conf,
            min_verify=fit_min_verify,
        )
        return take(keep, boxes, conf, *others), added, dropped
    strong = np.flatnonzero(np.asarray(conf) >= conf_min)
    if verify is not None and len(strong):  # drop boxes that are not dice
        strong = strong[verify.flags(rgb, np.asarray(boxes)[strong])]
    if sure is not None:
        kept = np.zeros(len(conf), bool)
        kept[strong] = True
        faint = sure_faint(
            rgb, boxes, conf, kept, conf_min=conf_min, sure=sure, verify=verify, faces=faces
        )
        strong = np.sort(np.concatenate([strong, faint]))
    return take(strong, boxes, conf, *others), 0, 0


@dataclass(slots=True)
class FaceReads:
    """Values (1..6), cocked flags and face confidences of a photo's dice, in box order (see
    :func:`read_faces`)."""

    values: NDArray[np.integer]
    cocked: NDArray[np.bool_]
    unsure: NDArray[np.bool_]
    face_confidence: NDArray[np.floating] | None = None
    """The face classifier's probability of each value, or None without a classifier."""


def read_faces(
    rgb: NDArray[np.uint8],
    boxes: NDArray[np.floating],
    values: NDArray[np.integer],
    cocked: NDArray[np.bool_],
    *,
    faces: Any = None,
    cocked_model: Any = None,
    unsure_below: float = 0.0,
) -> FaceReads:
    """Read the dice at ``boxes`` (pixels of ``rgb``): the face classifier ``faces`` gives each
    value (else the detector's ``values`` stand) and marks it unsure when its probability is under
    ``unsure_below``; the cocked-die model ``cocked_model`` sets the cocked flags (else the
    classifier's cocked class, else the detector's ``cocked``)."""
    n = len(boxes)
    face_conf = None
    face_cocked = None  # the face classifier's P(cocked), for the cocked-die model
    if faces is not None and n:
        values, cocked, probs = faces.classify(rgb, boxes)
        face_conf = probs[np.arange(n), values - 1]
        face_cocked = probs[:, 6] if probs.shape[1] > 6 else None
    if cocked_model is not None and n:
        cocked = cocked_model.flags(rgb, boxes, face_cocked)
    unsure = np.zeros(n, bool) if face_conf is None else (face_conf < unsure_below) & ~cocked
    return FaceReads(values, cocked, unsure, face_conf)


def build_dice(
    boxes: NDArray[np.floating],
    conf: NDArray[np.floating],
    reads: FaceReads,
    faint: NDArray[np.bool_] | None = None,
) -> list[Die]:
    """The dice at ``boxes`` (x1, y1, x2, y2) with detector confidences ``conf``, read as
    ``reads`` says, left to right; ``faint`` marks the dice the count fit added."""
    face_conf = reads.face_confidence
    return [
        Die(
            value=int(reads.values[k]),
            box=(float(boxes[k, 0]), float(boxes[k, 1]), float(boxes[k, 2]), float(boxes[k, 3])),
            confidence=float(conf[k]),
            cocked=bool(reads.cocked[k]),
            faint=bool(faint[k]) if faint is not None else False,
            face_confidence=None if face_conf is None else float(face_conf[k]),
            unsure=bool(reads.unsure[k]),
        )
        for k in np.argsort(boxes[:, 0], kind="stable")
    ]


def photo_dice(
    img: LoadedImage,
    look: tuple[NDArray[Any], ...],
    stages: DiceStages,
    *,
    expected: int | None = None,
) -> tuple[list[Die], int, int]:
    """The dice of photo ``img`` from the detector's ``look`` (boxes in pixels of ``img.rgb``,
    confidences, values, cocked flags), in the photo's own pixels, and how many were added and
    left out to reach the dice count ``expected`` (None: no count to fit)."""
    boxes, conf, values, cocked = look
    (boxes, conf, values, cocked), added, dropped = choose_boxes(
        img.rgb,
        boxes,
        conf,
        values,
        cocked,
        conf_min=stages.conf,
        verify=stages.verify,
        expected=expected,
        fit_conf=stages.fit_conf,
        fit_min_verify=stages.fit_min_verify,
        faces=stages.faces,
        sure=stages.sure_faint,
    )
    faint = conf < stages.conf  # boxes the count fit added, or sure faint ones
    reads = read_faces(
        img.rgb,
        boxes,
        values,
        cocked,
        faces=stages.faces,
        cocked_model=stages.cocked,
        unsure_below=stages.unsure_below,
    )
    boxes = np.array(boxes, np.float64).reshape(-1, 4)
    boxes[:, [0, 2]] = (boxes[:, [0, 2]] / img.scale_x).clip(0, img.width)
    boxes[:, [1, 3]] = (boxes[:, [1, 3]] / img.scale_y).clip(0, img.height)
    return build_dice(boxes, conf, reads, faint), added, dropped
