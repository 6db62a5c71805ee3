"""OffTableModel: looks at each die with its surroundings and says whether it left the surface.

The outline model sees the whole photo at a small size; its errors sit where dice that left the
surface lie, just past an edge. This local model (``models/dicecam-offtable.onnx``, trained by
:mod:`vision.train.offtable` on synthetic rolls) reads a crop ``CONTEXT`` times the die's size
around each die (``CROP`` pixels a side) and gives the probability that the die rests off the
playing surface (on the floor, beside the tray).

Example:
    >>> import numpy as np
    >>> context_crop(np.zeros((100, 100, 3), np.uint8), (40, 40, 50, 50)).shape
    (48, 48, 3)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from vision.config import MODELS_DIR
from vision.faces import crop_die
from vision.runtime import SmallModel, mirror_mean, softmax

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "CONTEXT",
    "CROP",
    "DEFAULT_OFFTABLE_MODEL",
    "MIRROR_MARGIN",
    "ContextDieModel",
    "OffTableModel",
    "context_crop",
]

CROP = 48
"""Side of the square crop the off-table model reads, in pixels."""

CONTEXT = 4.0
"""The crop's side, as a multiple of the die's longer side."""

DEFAULT_OFFTABLE_MODEL = MODELS_DIR / "dicecam-offtable.onnx"
"""The shipped off-table die model (in :data:`vision.config.MODELS_DIR`)."""

MIRROR_MARGIN = 2.0
"""A die model that reads each die with its mirror image (``tta``) reads the mirror image only
of dice whose own crop gives a probability within this many logits of the threshold it is
judged by. Over the real eval set and four synthetic test sets (2026-11-28), the mirror image
moved no die-check or cocked-die probability lying 2 logits or more from its threshold by more
than 1.62 logits, so it changed no call there."""


def context_crop(
    image: NDArray[np.uint8], box: Sequence[float], size: int = CROP, context: float = CONTEXT
) -> NDArray[np.uint8]:
    """Square crop ``context`` times the die's size around ``box``, resized to ``size``."""
    return crop_die(image, box, size, margin=(context - 1) / 2)


class ContextDieModel:
    """A two-class model that reads each die with some of its surroundings: the probability
    that the die is in the second class. :class:`OffTableModel`,
    :class:`vision.cocked.CockedModel` and :class:`vision.verify.VerifyModel` are those the
    reader uses.

    The ONNX file's metadata may give ``context`` (crop side over die side), ``threshold``
    (used when none is given) and ``tta`` (``True``: average with the mirror image; for the dice
    within ``mirror_margin`` logits of the threshold only, when it is not None, see
    :meth:`probability`).
    """

    default_model: Path | None = None
    """The file used when ``model`` is None (None: a model must be given)."""
    default_context: float = CONTEXT
    default_threshold: float = 0.5
    """The threshold when neither the caller nor the model's metadata gives one."""
    label: str = "die model"
    classes: str = "two classes"
    train_command: str = "its trainer in vision.train"

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        threshold: float | None = None,
        threads: int = 1,
        mirror_margin: float | None = MIRROR_MARGIN,
    ) -> None:
        model = model if model is not None else self.default_model
        if model is None:
            raise ValueError(f"expected the {self.label}'s ONNX file, got None")
        self.model_path = Path(model)
        if threshold is not None:
            _check_threshold(threshold)
        if not self.model_path.is_file():
            raise FileNotFoundError(
                f"{self.label} not found: {self.model_path}. Train it with {self.train_command}"
            )
        try:
            self._model = SmallModel(self.model_path, threads=threads)
        except Exception as exc:  # onnxruntime's own errors: not ONNX, a broken file
            raise ValueError(f"cannot load {self.label} {self.model_path}: {exc}") from None
        inp, out = self._model.input_shape, self._model.output_shape
        if len(inp) != 4 or out[-1] != 2:
            raise ValueError(
                f"{self.model_path}: expected 2 classes ({self.classes}) from input "
                f"N x 3 x S x S, got input {inp} and output {out}"
            )
        size = inp[2]
        self.size = size if isinstance(size, int) else CROP
        self.metadata = dict(self._model.metadata)
        self.context = float(self.metadata.get("context", self.default_context))
        self.tta = self.metadata.get("tta", "False").strip().lower() == "true"
        self.mirror_margin = mirror_margin
        if threshold is None:
            threshold = self._stored_threshold("threshold", self.default_threshold)
        self.threshold = float(threshold)

    def probability(
        self,
        rgb: NDArray[np.uint8],
        boxes: Sequence[Sequence[float]],
        *,
        near: float | NDArray[np.floating] | None = None,
    ) -> NDArray:
        """P(second class) of each die at ``boxes`` (x1, y1, x2, y2 in pixels of ``rgb``).

        With ``tta``, each die's probability is the mean of its crop's and its mirror image's;
        given ``near`` (the threshold the caller judges by: one, or one per die), only dice
        within :attr:`mirror_margin` logits of it are read mirrored, the others keep their
        crop's own (a call the mirror image could not change).
        """
        n = len(boxes)
        if n == 0:
            return np.zeros(0, np.float32)
        crops = np.stack([context_crop(rgb, b, self.size, self.context) for b in boxes])
        blob = crops.transpose(0, 3, 1, 2).astype(np.float32) * np.float32(1 / 255)

        def read(crops: NDArray[np.float32]) -> NDArray[np.float32]:
            return softmax(self._model.run(crops))[:, 1]

        if not self.tta:
            return read(blob)
        if near is None or self.mirror_margin is None:
            return mirror_mean(read, blob)
        margin = self.mirror_margin
        return mirror_mean(read, blob, lambda p: np.abs(_logit(p) - _logit(near)) < margin)

    def flags(self, rgb: NDArray[np.uint8], boxes: Sequence[Sequence[float]]) -> NDArray[np.bool_]:
        """Whether each die's probability reaches :attr:`threshold`."""
        return self.probability(rgb, boxes, near=self.threshold) >= self.threshold

    def _stored(self, key: str, default: float) -> float:
        """The number under ``key`` in the model's metadata, else ``default``."""
        stored = self.metadata.get(key, str(default))
        try:
            return float(stored)
        except ValueError:
            raise ValueError(
                f"{self.model_path}: expected a number in its {key} metadata, got {stored!r}"
            ) from None

    def _stored_threshold(self, key: str, default: float) -> float:
        """The threshold under ``key`` in the model's metadata, else ``default``; checked."""
        return _check_threshold(self._stored(key, default))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={str(self.model_path)!r}, threshold={self.threshold})"


def _logit(p: float | NDArray[np.floating]) -> NDArray[np.float64]:
    """log(p / (1 - p)), with p kept inside (1e-6, 1 - 1e-6)."""
    q = np.clip(np.asarray(p, np.float64), 1e-6, 1 - 1e-6)
    return np.log(q / (1 - q))


def _check_threshold(value: float) -> float:
    if not 0.0 < value < 1.0:
        raise ValueError(f"expected 0 < threshold < 1, got {value}")
    return value


class OffTableModel(ContextDieModel):
    """The probability that each die rests off the playing surface.

    Args:
        model: ONNX file (input N x 3 x CROP x CROP float RGB 0..1, output N x 2 logits: on,
            off); default ``<repo>/models/dicecam-offtable.onnx``.
        threshold: probability from which a die is called off the surface (default: the
            model's ``threshold`` metadata, which the shipped one has not, else 0.8: chosen on the
            validation rolls of its training sets, where with the shipped outline it found 26
            of 118 resting off-table dice, the outline alone 14, neither busting any of the 212
            clean rolls).
        threads: onnxruntime intra-op threads.

    Raises:
        FileNotFoundError: the model file is missing.
        ValueError: the threshold is not between 0 and 1, or the model is not a 2-class one.
    """

    default_model = DEFAULT_OFFTABLE_MODEL
    default_threshold = 0.8
    label = "off-table model"
    classes = "on, off the surface"
    train_command = "`python -m vision.train.offtable DATA`"
