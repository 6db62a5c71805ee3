"""VerifyModel: checks each box the detector found, and drops the ones that are not dice.

The detector fires on things that look like dice to it: board-game pieces, sunglasses, remote
controls, the compartments of a tray. This model reads each box with a little of its
surroundings (a crop ``VERIFY_CONTEXT`` times the box's size) and gives the probability that it
holds a die; the reader drops boxes under its threshold. It lives beside the detector as
``NAME-verify.onnx`` and is trained by :mod:`vision.train.verify` on the detector's own
mistakes, mined from labelled photos.

Example:
    >>> verify_model_for("models/dicecam-reader.onnx").name
    'dicecam-reader-verify.onnx'
"""

from __future__ import annotations

from pathlib import Path

from vision.table.dice import ContextDieModel

__all__ = ["VERIFY_CONTEXT", "VERIFY_THRESHOLD", "VerifyModel", "verify_model_for"]

VERIFY_CONTEXT = 1.5
"""The crop's side, as a multiple of the box's longer side, for the models trained here."""

VERIFY_THRESHOLD = 0.1
"""A box is dropped when its probability of holding a die is under this (unless the model's
metadata gives its own ``threshold``, chosen when it was trained)."""


def verify_model_for(detector: str | Path) -> Path:
    """Where the die check of a detector lives: ``NAME-verify.onnx`` beside ``NAME.onnx``."""
    detector = Path(detector)
    return detector.with_name(f"{detector.stem}-verify.onnx")


class VerifyModel(ContextDieModel):
    """The probability that each detected box holds a die.

    Args:
        model: ONNX file (input N x 3 x S x S float RGB 0..1, output N x 2 logits: not a die,
            a die), with ``context`` (and ``threshold``, ``tta``) in its metadata.
        threshold: boxes whose probability is under it are dropped (:meth:`flags` says which
            reach it); default: the model's ``threshold`` metadata, else
            :data:`VERIFY_THRESHOLD`.
        threads: onnxruntime intra-op threads.
        mirror_margin: with ``tta``, :meth:`flags` reads mirrored only the boxes whose crop
            gives a probability within this many logits of the threshold (None: every box).

    Raises:
        FileNotFoundError: the model file is missing.
        ValueError: the threshold is not between 0 and 1, or the model is not a 2-class one.
    """

    default_context = VERIFY_CONTEXT
    default_threshold = VERIFY_THRESHOLD
    label = "die check"
    classes = "not a die, a die"
    train_command = "`python -m vision.train.verify DATA`"
