"""SurfaceModel: the playing-surface outline model, run with onnxruntime.

The model (``models/dicecam-surface.onnx``, trained by :mod:`vision.train.surface`) takes the
photo squeezed to a square (``1x3xSxS`` float RGB 0..1) and gives, for each cell of a coarse
grid, the probability that it lies on the playing surface (one layer: the shipped model), or
of three layers: off the furniture, table top, tray or box interior (``--layers 3``, where
:func:`play_surface` keeps the tray when one is in view, else the table). The largest surface
region becomes the outline polygon in photo pixels.

Example:
    >>> from vision.io import load_image
    >>> from vision.table import SurfaceModel
    >>> model = SurfaceModel()  # models/dicecam-surface.onnx
    >>> corners = model.outline(load_image("datasets/samples/roll-s21-031.jpg").rgb)  # 640x480
    >>> corners  # doctest: +SKIP
    [(0.0, 166.9), (0.0, 328.1), (37.5, 335.6), (107.5, 480.0), (640.0, 480.0), (640.0, 316.9), (322.5, 80.6), (247.5, 80.6)]
    >>> len(corners) >= 3 and all(0 <= x <= 640 and 0 <= y <= 480 for x, y in corners)
    True
    >>> model.outline(load_image("datasets/samples/roll-s21-009.jpg").rgb) is None  # fills it
    True
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from vision.config import MODELS_DIR
from vision.table.geometry import Outline, dice_map, mask_to_outline

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "DEFAULT_SURFACE_MODEL",
    "LAYERS",
    "MIN_SURFACE",
    "MIN_TRAY",
    "SurfaceFinding",
    "SurfaceModel",
    "SurfaceModelError",
    "play_surface",
    "squeeze",
    "surface_certainty",
]

DEFAULT_SURFACE_MODEL = MODELS_DIR / "dicecam-surface.onnx"
"""The shipped outline model (in :data:`vision.config.MODELS_DIR`)."""


@dataclass(frozen=True)
class SurfaceFinding:
    """What :meth:`SurfaceModel.find` saw in a photo: the outline, or why there is none."""

    outline: Outline | None
    """The surface polygon in photo pixels; None when the surface fills the frame (no edge
    seen); ``[]`` when no surface was found (or only a speck), or the model is unsure."""
    certainty: float
    """:func:`surface_certainty` of the model's grid."""
    unsure: bool
    """The certainty is under the model's ``min_certainty``: the grid was not read at all."""

    @property
    def note(self) -> str:
        """What was seen, in words a player reads (``dicecam calibrate``, the page)."""
        if self.unsure:
            return (
                f"the learned outline is unsure of this photo (certainty {self.certainty:.2f}, "
                "under DICECAM_SURFACE_MIN_CERTAINTY)"
            )
        if self.outline is None:
            return "no edge seen: the surface fills the frame (every die counts as on it)"
        if not self.outline:
            return "no playing surface found in the photo"
        return f"the learned outline ({len(self.outline)} corners)"


LAYERS = 3
"""Layers of a surface model: 0 off the furniture, 1 table top (or board), 2 tray interior."""
MIN_TRAY = 0.04
"""Share of the grid the tray layer must hold for the tray to be the playing surface."""
MIN_SURFACE = 0.03
"""Share of the frame the surface region must cover to be an outline: a smaller speck is the
model not recognising the surface, not a table seen from afar (the smallest true surface in the
synthetic test set covers 5.7% of the frame)."""


def surface_certainty(prob: NDArray[np.floating]) -> float:
    """How sure a surface probability grid is: the mean of ``|2p - 1|`` over its cells (1 when
    every cell is 0 or 1, 0 when every cell is 0.5).

    Example:
        >>> surface_certainty(np.array([[0.0, 1.0], [0.5, 0.5]]))
        0.5
    """
    prob = np.asarray(prob, np.float64)
    return float(np.abs(2.0 * prob - 1.0).mean()) if prob.size else 0.0


def play_surface(
    probs: NDArray[np.float32], min_tray: float = MIN_TRAY, threshold: float = 0.5
) -> NDArray[np.float32]:
    """The playing-surface probability grid from a model's ``(layers, h, w)`` output.

    When a tray or box interior (cells of tray probability at least ``threshold``, the same
    cut the outline uses) covers at least ``min_tray`` of the grid, the dice were rolled
    in it and it alone is the surface (a die beside it on the table is off); otherwise the
    surface is the table and anything on it. A single-layer output is the surface already.

    Example:
        >>> probs = np.zeros((3, 4, 4), np.float32); probs[1] = 1.0  # table everywhere
        >>> probs[:, 1:3, 1:3] = [[[0.0]], [[0.2]], [[0.8]]]  # but a tray in the middle
        >>> (play_surface(probs) >= 0.5).astype(int).tolist()
        [[0, 0, 0, 0], [0, 1, 1, 0], [0, 1, 1, 0], [0, 0, 0, 0]]
    """
    if probs.ndim != 3 or probs.shape[0] not in (1, LAYERS):
        raise ValueError(f"expected (1 or {LAYERS}, h, w) probabilities, got {probs.shape}")
    if probs.shape[0] == 1:
        return probs[0]
    tray = probs[2]
    if float((tray >= threshold).mean()) >= min_tray:
        return tray
    return probs[1] + probs[2]


def squeeze(image: NDArray[np.uint8], size: tuple[int, int]) -> NDArray[np.uint8]:
    """The whole photo squeezed to ``size`` = (height, width), as the outline model reads it
    (any channel order: the resize keeps it).

    A photo over twice the size both ways goes bilinear to twice the size first, then area:
    close to area averaging all the way, and 5 times faster on a 640x480 photo.

    Example:
        >>> squeeze(np.zeros((480, 640, 3), np.uint8), (128, 128)).shape
        (128, 128, 3)
    """
    import cv2

    h, w = size
    if image.shape[0] > 2 * h and image.shape[1] > 2 * w:
        image = cv2.resize(image, (2 * w, 2 * h), interpolation=cv2.INTER_LINEAR)
    return cv2.resize(image, (w, h), interpolation=cv2.INTER_AREA)


class SurfaceModelError(RuntimeError):
    """The outline model is missing, unreadable or not a surface model dicecam understands."""


class SurfaceModel:
    """Finds the playing surface (table top, tray, box or board) in a photo.

    Args:
        model: ONNX file; default ``<repo>/models/dicecam-surface.onnx``.
        threshold: surface probability above which a cell is on the surface.
        convex: the outline is the convex hull of the surface region (a flat surface seen in
            perspective is convex; see :func:`~vision.table.geometry.mask_to_outline`).
        min_tray: share of the grid a tray must cover to be the surface (see
            :func:`play_surface`).
        min_certainty: below this :func:`surface_certainty` of its grid the model is taken to
            be unsure and gives no outline (no die is called off by it). None: the model's
            ``min_certainty`` metadata, else 0 (always an outline).
        min_area: share of the frame under which the surface region found is a speck, and the
            model gives no outline (see :data:`MIN_SURFACE`).
        threads: onnxruntime intra-op threads.

    Raises:
        SurfaceModelError: the model file is missing or does not have one image input and one
            ``(batch, 1 or 3, h, w)`` output.
    """

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        threshold: float = 0.5,
        threads: int = 1,
        convex: bool = False,
        min_tray: float = MIN_TRAY,
        min_certainty: float | None = None,
        min_area: float = MIN_SURFACE,
    ) -> None:
        self.convex = bool(convex)
        if not 0.0 <= min_area < 1.0:
            raise ValueError(f"expected 0 <= min_area < 1, got {min_area}")
        self.min_area = float(min_area)
        self.min_tray = float(min_tray)
        self.model_path = Path(model) if model is not None else DEFAULT_SURFACE_MODEL
        if not 0.0 < threshold < 1.0:
            raise ValueError(f"expected 0 < threshold < 1, got {threshold}")
        self.threshold = float(threshold)
        if not self.model_path.is_file():
            raise SurfaceModelError(
                f"surface model not found: {self.model_path}. Train it with "
                "`python -m vision.train.surface DATA`, or calibrate the camera with "
                "`dicecam calibrate PHOTO`"
            )
        from vision.runtime import SmallModel

        try:
            self._model = SmallModel(self.model_path, threads=threads)
        except Exception as exc:
            raise SurfaceModelError(f"cannot load surface model {self.model_path}: {exc}") from None
        inp, out = self._model.input_shape, self._model.output_shape
        if len(inp) != 4 or inp[1] not in (3, 4) or len(out) != 4 or out[1] not in (1, LAYERS):
            raise SurfaceModelError(
                f"{self.model_path}: expected input (batch, 3 or 4, h, w) and output "
                f"(batch, 1 or {LAYERS}, h, w), got {inp} -> {out}"
            )
        self.layers = int(out[1])
        self.reads_dice = int(inp[1]) == 4
        """The model reads a dice map beside the photo (:func:`~vision.table.geometry.dice_map`
        of the reader's boxes): pass ``boxes`` to its methods."""
        self.metadata = dict(self._model.metadata)
        h, w = inp[2], inp[3]
        if not (isinstance(h, int) and isinstance(w, int)):
            size = ast.literal_eval(self.metadata.get("imgsz", "128"))
            h, w = (size, size) if isinstance(size, int) else size
        self.imgsz: tuple[int, int] = (int(h), int(w))
        if min_certainty is None:
            stored = self.metadata.get("min_certainty", "0")
            try:
                min_certainty = float(stored)
            except ValueError:
                raise SurfaceModelError(
                    f"{self.model_path}: expected a number in its min_certainty metadata, "
                    f"got {stored!r}"
                ) from None
        if not 0.0 <= min_certainty < 1.0:
            raise ValueError(f"expected 0 <= min_certainty < 1, got {min_certainty}")
        self.min_certainty = float(min_certainty)

    def layer_probabilities(
        self,
        rgb: NDArray[np.uint8],
        *,
        boxes: Sequence[Sequence[float]] = (),
        size: tuple[int, int] | None = None,
    ) -> NDArray[np.float32]:
        """The model's ``(layers, h, w)`` grid for an ``H x W x 3`` uint8 RGB photo.

        ``boxes``: the dice found, in pixels of the photo (of ``size`` = (width, height) when
        it was decoded smaller), for a model that :attr:`reads_dice`; others ignore them.
        """
        if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8:
            raise ValueError(
                f"expected an H x W x 3 uint8 RGB image, got shape {rgb.shape} {rgb.dtype}"
            )
        h, w = self.imgsz
        width, height = size if size is not None else (rgb.shape[1], rgb.shape[0])
        small = squeeze(rgb, (h, w))
        if self.reads_dice:
            small = np.dstack([small, dice_map(boxes, width, height, (h, w))])
        blob = (small.astype(np.float32) * np.float32(1 / 255)).transpose(2, 0, 1)[None]
        out = self._model.run(blob)
        return out[0]

    def probability(
        self,
        rgb: NDArray[np.uint8],
        *,
        boxes: Sequence[Sequence[float]] = (),
        size: tuple[int, int] | None = None,
    ) -> NDArray[np.float32]:
        """The playing-surface probability grid of an ``H x W x 3`` uint8 RGB photo (whole
        frame; see :func:`play_surface`; ``boxes`` and ``size`` as for
        :meth:`layer_probabilities`)."""
        probs = self.layer_probabilities(rgb, boxes=boxes, size=size)
        return play_surface(probs, self.min_tray, self.threshold)

    def outline(
        self,
        rgb: NDArray[np.uint8],
        size: tuple[int, int] | None = None,
        *,
        boxes: Sequence[Sequence[float]] = (),
    ) -> Outline | None:
        """The surface polygon in pixels of ``rgb`` (or of ``size`` = (width, height) when the
        photo was decoded smaller than its true size). ``boxes``: the dice found, in those
        pixels, for a model that :attr:`reads_dice`.

        None when the surface fills the frame, and also when the model sees no surface at all
        (or only a speck under ``min_area`` of the frame) or is unsure of its grid
        (:func:`surface_certainty` under ``min_certainty``): a photo it cannot make sense of
        must not bust a roll (calibrate such a camera instead).
        """
        return self.find(rgb, size, boxes=boxes).outline or None

    def find(
        self,
        rgb: NDArray[np.uint8],
        size: tuple[int, int] | None = None,
        *,
        boxes: Sequence[Sequence[float]] = (),
    ) -> SurfaceFinding:
        """:meth:`outline`, telling apart why there is none: the surface fills the frame
        (``outline`` None), none was found (``[]``), or the model is unsure (``unsure``)."""
        import cv2

        prob = self.probability(rgb, boxes=boxes, size=size)
        certainty = surface_certainty(prob)
        if certainty < self.min_certainty:
            return SurfaceFinding([], certainty, unsure=True)
        # a finer grid for a smoother polygon
        prob = cv2.resize(
            prob, (prob.shape[1] * 4, prob.shape[0] * 4), interpolation=cv2.INTER_LINEAR
        )
        width, height = size if size is not None else (rgb.shape[1], rgb.shape[0])
        outline = mask_to_outline(
            prob,
            width,
            height,
            threshold=self.threshold,
            convex=self.convex,
            min_area=self.min_area,
        )
        return SurfaceFinding(outline, certainty, unsure=False)

    def __repr__(self) -> str:
        return (
            f"SurfaceModel(model={str(self.model_path)!r}, imgsz={self.imgsz}, "
            f"layers={self.layers}, min_certainty={self.min_certainty}"
            + (", reads_dice=True)" if self.reads_dice else ")")
        )
