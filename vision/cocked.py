"""CockedModel: says which dice lean on something, with no flat top face.

The face classifier reads a tight crop of each die and also has a "cocked" class, but from that
crop a leaning die looks much like a flat one seen at an angle: at the true boxes of the
synthetic test it flagged 25 of 59 resting cocked dice, and 25 of 945 flat ones. This model reads
each die with a little of its surroundings (a crop twice the die's size, where the die it leans
on and the tilt against the table show) and gives the probability that it is cocked; the reader
calls a die cocked on the mean of that and the classifier's. It lives beside the detector as
``NAME-cocked.onnx`` and is trained by :mod:`vision.train.cocked` on synthetic rolls, whose
sidecars know each die's tilt.

Example:
    >>> cocked_model_for("models/dicecam-reader.onnx").name
    'dicecam-reader-cocked.onnx'
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from vision.table.dice import MIRROR_MARGIN, ContextDieModel

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "COCKED_CONTEXT",
    "COCKED_THRESHOLD",
    "COCKED_THRESHOLD_ALONE",
    "CockedModel",
    "cocked_model_for",
]

COCKED_CONTEXT = 2.0
"""The crop's side, as a multiple of the die's longer side, for the models trained here."""

COCKED_THRESHOLD = 0.45
"""A die is called cocked when the mean of this model's P(cocked) and the face classifier's
reaches this (unless the model's metadata says otherwise). Chosen on the validation dice of the
training sets, at the true boxes, as the threshold that finds the most cocked dice less flat
dice flagged: 66 of 127 cocked dice, 36 of 1997 flat ones (the classifier alone: 46 and 69; this
model alone at its best threshold: 49 and 22)."""

COCKED_THRESHOLD_ALONE = 0.65
"""The threshold on this model's P(cocked) alone, when no face classifier reads the dice."""


def cocked_model_for(detector: str | Path) -> Path:
    """Where the cocked-die model of a detector lives: ``NAME-cocked.onnx`` beside ``NAME.onnx``."""
    detector = Path(detector)
    return detector.with_name(f"{detector.stem}-cocked.onnx")


class CockedModel(ContextDieModel):
    """The probability that each die is cocked (leaning, no flat top face).

    Args:
        model: ONNX file (input N x 3 x S x S float RGB 0..1, output N x 2 logits: flat,
            cocked), with ``context`` (and ``threshold``, ``tta``) in its metadata.
        threshold: a die is cocked when the mean of this model's P(cocked) and the face
            classifier's reaches it (default: the model's ``threshold`` metadata, else
            :data:`COCKED_THRESHOLD`); ``threshold_alone`` (metadata, else
            :data:`COCKED_THRESHOLD_ALONE`) applies to this model's P(cocked) when no
            classifier probability is given.
        threads: onnxruntime intra-op threads.
        mirror_margin: with ``tta``, only dice whose crop gives a probability within this many
            logits of the bar it must reach are read mirrored too (None: every die).

    Raises:
        FileNotFoundError: the model file is missing.
        ValueError: the threshold is not between 0 and 1, or the model is not a 2-class one.
    """

    default_context = COCKED_CONTEXT
    default_threshold = COCKED_THRESHOLD
    label = "cocked-die model"
    classes = "flat, cocked"
    train_command = "`python -m vision.train.cocked DATA`"

    def __init__(
        self,
        model: str | Path,
        *,
        threshold: float | None = None,
        threads: int = 1,
        mirror_margin: float | None = MIRROR_MARGIN,
    ) -> None:
        super().__init__(model, threshold=threshold, threads=threads, mirror_margin=mirror_margin)
        self.threshold_alone = self._stored_threshold("threshold_alone", COCKED_THRESHOLD_ALONE)

    def flags(
        self,
        rgb: NDArray[np.uint8],
        boxes: Sequence[Sequence[float]],
        classifier: NDArray[np.floating] | None = None,
    ) -> NDArray[np.bool_]:
        """Whether each die at ``boxes`` is cocked; ``classifier``: the face classifier's
        P(cocked) for the same dice, averaged with this model's (see :data:`COCKED_THRESHOLD`)."""
        if classifier is None:
            return self.probability(rgb, boxes, near=self.threshold_alone) >= self.threshold_alone
        face = np.asarray(classifier, np.float32)
        p = self.probability(rgb, boxes, near=2 * self.threshold - face)  # the bar p must reach
        return (p + face) / 2 >= self.threshold
