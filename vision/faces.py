"""Second stage of the reader: read each die's top face from a crop of the photo.

The detector finds dice at a small input size, where pips of small or far dice blur together.
:class:`FaceClassifier` cuts each die out of the decoded photo at its own scale (``CROP_SIZE``
pixels a side) and reads it with a small network: classes 0..5 are faces 1..6, class 6 is a
cocked die. The model is an ONNX file next to the detector (``dicecam-reader-faces.onnx`` beside
``dicecam-reader.onnx``).

Example:
    >>> import numpy as np
    >>> crop_die(np.zeros((100, 100, 3), np.uint8), (10, 10, 30, 40)).shape
    (48, 48, 3)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["CROP_SIZE", "FACE_SURE", "FaceClassifier", "crop_die", "faces_model_for"]

CROP_SIZE = 48
"""Side of the square crop the face classifier reads, in pixels."""

CROP_MARGIN = 0.15
"""How much the crop grows around the die's box, per side, as a share of its longer side."""

FACE_SURE = 0.9
"""A die whose crop alone gives one value at least this probability is not read mirrored too
(:class:`FaceClassifier`'s ``sure``). Over the real eval set and three synthetic test sets
(3578 dice, 2026-11-28) no value nor cocked call changed, and no face probability crossed the
reader's bar for an unsure value (0.6); about two thirds of the dice skip their mirror image."""


def crop_die(
    image: NDArray[np.uint8],
    box: Sequence[float],
    size: int = CROP_SIZE,
    margin: float = CROP_MARGIN,
) -> NDArray[np.uint8]:
    """Square crop around ``box`` (x1, y1, x2, y2), grown by ``margin``, resized to ``size``.

    Pixels outside the image repeat the edge. Training and inference both cut dice with this.
    """
    import cv2

    x1, y1, x2, y2 = (float(v) for v in box)
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
    side = max(x2 - x1, y2 - y1, 4.0) * (1 + 2 * margin)
    scale = size / side
    m = np.array([[scale, 0, size / 2 - cx * scale], [0, scale, size / 2 - cy * scale]], np.float32)
    interp = cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR
    return cv2.warpAffine(image, m, (size, size), flags=interp, borderMode=cv2.BORDER_REPLICATE)


def faces_model_for(detector: str | Path) -> Path:
    """Where the face classifier of a detector lives: ``NAME-faces.onnx`` beside ``NAME.onnx``."""
    detector = Path(detector)
    return detector.with_name(f"{detector.stem}-faces.onnx")


class FaceClassifier:
    """Reads the top value of dice from RGB crops with an ONNX classifier.

    Args:
        model: ONNX file with input N x 3 x S x S (RGB, 0..1) and output N x 7 logits.
        threads: onnxruntime intra-op threads.
        tta: average the probabilities of the crop and its mirror image (left-right; a mirror
            keeps the top face at the top of an oblique view, where a quarter turn would not).
        sure: with ``tta``, a die whose crop alone gives a value at least this probability
            keeps that reading and is not read mirrored (the time of a second crop); None:
            every die is read mirrored too. :meth:`classify` can say otherwise per call.
    """

    def __init__(
        self,
        model: str | Path,
        *,
        threads: int = 2,
        tta: bool = True,
        sure: float | None = FACE_SURE,
    ) -> None:
        from vision.runtime import SmallModel

        self.model_path = Path(model)
        self.tta = tta
        self.sure = sure
        self._model = SmallModel(self.model_path, threads=threads)
        inp, out = self._model.input_shape, self._model.output_shape
        if len(inp) != 4 or inp[1] != 3 or len(out) != 2 or out[1] not in (6, 7):
            raise ValueError(
                f"{self.model_path}: expected a face classifier (input N x 3 x S x S, output "
                f"N x 7, or N x 6 without the cocked class), got input {inp} and output {out}"
            )
        size = inp[2]
        self.size = size if isinstance(size, int) else CROP_SIZE

    def classify(
        self,
        rgb: NDArray[np.uint8],
        boxes: NDArray[np.floating],
        *,
        sure: float | None | bool = True,
    ) -> tuple[NDArray[np.intp], NDArray[np.bool_], NDArray[np.float32]]:
        """Values (1..6), cocked flags and class probabilities (N x 7) of dice at ``boxes``.

        ``boxes`` are x1, y1, x2, y2 in pixels of ``rgb``. ``sure``: the bar over which a
        die's crop alone is read without its mirror image (True: the classifier's own
        ``sure``; None: every die mirrored, for a caller whose own bar is stricter).
        """
        n = len(boxes)
        if n == 0:
            return np.zeros(0, np.intp), np.zeros(0, bool), np.zeros((0, 7), np.float32)
        crops = np.stack([crop_die(rgb, b, self.size) for b in boxes])
        blob = crops.transpose(0, 3, 1, 2).astype(np.float32) * np.float32(1 / 255)
        bar = self.sure if sure is True else sure
        probs = self._read(blob, bar if self.tta else None, mirror=self.tta)
        values = probs[:, :6].argmax(axis=1) + 1
        cocked = probs[:, 6] > probs[:, :6].max(axis=1) if probs.shape[1] > 6 else np.zeros(n, bool)
        return values, cocked, probs

    def _read(
        self, blob: NDArray[np.float32], bar: float | None, *, mirror: bool
    ) -> NDArray[np.float32]:
        """Class probabilities of the crops ``blob``: with ``mirror``, averaged with their mirror
        images' for the crops whose best value is under ``bar`` (all of them when it is None)."""
        from vision.runtime import mirror_mean, softmax

        def read(crops: NDArray[np.float32]) -> NDArray[np.float32]:
            return softmax(self._model.run(crops))

        if not mirror:
            return read(blob)
        if bar is None:
            return mirror_mean(read, blob)
        return mirror_mean(read, blob, lambda probs: probs[:, :6].max(axis=1) < bar)
