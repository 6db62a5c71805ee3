"""DiceReader: the shipped YOLO detector, run with OpenVINO or onnxruntime (no torch, no
ultralytics).

The model is an ultralytics ONNX export: input ``1x3xSxS`` float32 RGB in 0..1, letterboxed with
gray 114; output either raw ``(B, 4 + nc, N)`` (boxes ``cx, cy, w, h`` in input pixels, then one
score per class; ``nms=False`` on YOLO11) or end-to-end ``(B, K, 6)`` rows of
``x1, y1, x2, y2, score, class`` (YOLO26). Classes come from the ``names`` metadata: ``'1'`` to
``'6'`` are top faces, ``'cocked'`` marks a leaning die. A one-class detector (any name, e.g.
``'die'``) only finds dice, and needs the face classifier below to read them.

When a face classifier ``NAME-faces.onnx`` lies beside ``NAME.onnx`` (see :mod:`vision.faces`),
it re-reads every die found from a crop of the photo at the die's own scale: the detector then only
finds dice, and the classifier gives their value and cocked flag. Two more models beside it join
when present: the die check ``NAME-verify.onnx`` (:mod:`vision.verify`) drops boxes that are not
dice before the faces are read, and the cocked-die model ``NAME-cocked.onnx``
(:mod:`vision.cocked`) sets the cocked flags. :mod:`vision.reader_model` loads the detector,
:mod:`vision.stages` finds and loads those three (each model once per file:
:func:`vision.model_files.kept_model`);
:mod:`vision.passes` takes the looks at each photo (first, mirror, second) and reads its dice.

Example:
    >>> from vision import DiceReader
    >>> reader = DiceReader()
    >>> reading = reader.read("datasets/samples/roll-s21-041.jpg", expected_dice=6)
    >>> reading.values, reading.missing, reading.bust
    ([5, 1, 4, 5, 4, 1], 0, False)
"""

from __future__ import annotations

import operator
import os
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from vision.boxes import letterbox, nms
from vision.config import VisionSettings
from vision.faces import faces_model_for
from vision.faint import SureFaint
from vision.io import ImageError, ImageSource, LoadedImage, load_image
from vision.looks import rect_input_shape
from vision.passes import read_chunk
from vision.reader_model import open_reader_model
from vision.stages import ModelError, default_table, load_stage
from vision.types import Reading

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["DiceReader", "ModelError", "letterbox", "nms"]

SECOND_LOOK_SCALE = 1.5
"""The default second look reads at this times the model's input size."""
DECODE_SCALE = 3
"""A JPEG read with the face classifier decodes with its longer side at least this times the
first look's: a die the first look sees at 10 px keeps about 30 px for the classifier's crop."""


class DiceReader:
    """Reads every die in a photo: its top value, box (input pixels) and confidence.

    Args:
        model: ONNX file; default ``DICECAM_MODEL`` or ``<repo>/models/dicecam-reader.onnx``.
        conf: minimum confidence of a die (default ``DICECAM_CONF``, 0.25).
        iou: IoU above which two boxes are the same die (default ``DICECAM_IOU``, 0.5).
        providers: onnxruntime execution providers (default CPU; any other makes onnxruntime
            the backend).
        threads: inference threads (default ``DICECAM_THREADS``, 2).
        backend: ``openvino``, ``onnxruntime`` or ``auto`` (default ``DICECAM_BACKEND``, auto:
            OpenVINO when installed); see :mod:`vision.backends`.
        max_det: at most this many dice per photo.
        faces: face classifier ONNX; default ``DICECAM_FACES_MODEL``, else ``NAME-faces.onnx``
            beside the detector when present; False to read values from the detector alone.
        cocked: cocked-die model ONNX; default ``DICECAM_COCKED_MODEL``, else
            ``NAME-cocked.onnx`` beside the detector when present; False for none (the face
            classifier's cocked class then decides).
        verify: die check ONNX, which drops boxes that are not dice (board pieces, glasses);
            default ``DICECAM_VERIFY_MODEL``, else ``NAME-verify.onnx`` beside the detector when
            present; False for none.
        table: the table step (:class:`vision.table.TableStage`) that fills ``on_table`` and
            ``outline``; default: the stored calibration, else ``models/dicecam-surface.onnx``
            when present (``DICECAM_TABLE=0`` turns it off); None for no table step.
        imgsz: input size (longer side) of the first look, a multiple of the model's stride
            (default ``DICECAM_IMGSZ``, else the model's own: 512 for the shipped model).
            Smaller reads faster and misses more far dice; dynamic-size models only.
        second_look: a second, larger input size at which a photo is read again when its dice
            are small (default ``DICECAM_SECOND_LOOK``, else half as large again as the first
            look's size: 768 for the shipped 512 px model; 0 for none). Far dice are found more often
            at the larger size, and only those photos pay for the second inference.
            Dynamic-size models only.
        second_look_below: a photo is small-diced when its dice's median longer side is under
            this many input pixels at the first look's size (default
            ``DICECAM_SECOND_LOOK_BELOW``, 24).
        mirror: a photo with a doubtful die (confidence under twice ``conf``) is read again
            mirrored, and a box the mirror look does not confirm loses up to half its
            confidence (:mod:`vision.fusion`); default ``DICECAM_MIRROR``, on. Not when told
            the dice count, which judges doubtful boxes its own way. Those photos take a second
            inference.

    Raises:
        ModelError: the model file is missing or is not a dice detector export.
        ValueError: ``conf``, ``iou``, ``imgsz`` or ``second_look`` is out of range (or
            ``imgsz`` is given for a model with a fixed input size), or ``backend`` is unknown
            or not installed.
    """

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        conf: float | None = None,
        iou: float | None = None,
        providers: Sequence[str] | None = None,
        threads: int | None = None,
        max_det: int = 300,
        faces: str | Path | bool | None = None,
        table: Any = "auto",
        imgsz: int | None = None,
        second_look: int | None = None,
        second_look_below: float | None = None,
        backend: str | None = None,
        cocked: str | Path | bool | None = None,
        verify: str | Path | bool | None = None,
        mirror: bool | None = None,
        warmup: bool = True,
    ) -> None:
        settings = VisionSettings()
        self.settings = settings
        self.model_path = Path(model) if model is not None else Path(settings.model)
        self.conf = settings.conf if conf is None else float(conf)
        self.iou = settings.iou if iou is None else float(iou)
        self.max_det = int(max_det)
        if not 0.0 <= self.conf <= 1.0 or not 0.0 < self.iou <= 1.0:
            raise ValueError(
                f"expected 0 <= conf <= 1 and 0 < iou <= 1, got {self.conf}, {self.iou}"
            )
        n = int(threads or settings.threads)
        self._session, info = open_reader_model(
            self.model_path,
            threads=n,
            backend=settings.backend if backend is None else backend,
            providers=providers,
        )
        self.backend: str = self._session.backend
        """The runtime that runs the detector: ``openvino`` or ``onnxruntime``."""
        self.metadata: dict[str, str] = self._session.metadata
        self.fixed_batch: int | None = info.fixed_batch
        self.dynamic = info.dynamic
        """A model exported with dynamic height and width reads each photo at its own aspect: the
        longer side at ``max(imgsz)``, the other padded to a multiple of the stride only."""
        self.stride = info.stride
        try:
            self.imgsz: tuple[int, int] = self._first_look(
                info.imgsz, settings.imgsz if imgsz is None else int(imgsz)
            )
            """The first look's input (height, width): the model's own unless ``imgsz`` says."""
        except ValueError as exc:
            if imgsz is not None:
                raise
            raise ValueError(f"DICECAM_IMGSZ: {exc}") from None  # the setting's size: say so
        self.end2end = info.end2end
        self.names = info.names
        self.roles = info.roles
        self.num_classes = len(self.names)
        self.dice_only = self.num_classes == 1
        """A one-class detector finds dice without reading them: the face classifier must."""
        self.faces = load_stage("faces", faces, self.model_path, settings, n)
        """The face classifier (:class:`vision.faces.FaceClassifier`) that reads each die's value
        from a crop, or None: then the detector's classes do."""
        self.cocked = load_stage("cocked", cocked, self.model_path, settings, n)
        """The cocked-die model (:class:`vision.cocked.CockedModel`) that sets each die's
        ``cocked`` flag, or None: then the face classifier's cocked class (or the detector's)
        does."""
        self.verify = load_stage("verify", verify, self.model_path, settings, n)
        """The die check (:class:`vision.verify.VerifyModel`) that drops boxes that are not
        dice, or None."""
        if self.dice_only and self.faces is None:
            raise ModelError(
                f"{self.model_path}: a one-class detector ({self.names[0]!r}) only finds dice; "
                f"expected its face classifier at {faces_model_for(self.model_path)} "
                "(or DICECAM_FACES_MODEL)"
            )
        self.decode_side = max(self.imgsz) * (DECODE_SCALE if self.faces is not None else 1)
        """JPEGs decode at reduced scale down to this many pixels along the longer side (more
        with a classifier, which reads dice at their own scale): a 12-megapixel phone photo
        decodes at half scale (2016 px) for a 512 px first look."""
        self.table = default_table(n, die_check=self.verify) if table == "auto" else table
        size = settings.second_look if second_look is None else int(second_look)
        if size is None:  # half as large again, on the stride: 768 for a 512 first look
            size = round(max(self.imgsz) * SECOND_LOOK_SCALE / self.stride) * self.stride
        if size < 0:
            raise ValueError(f"expected second_look >= 0 (0: none), got {size}")
        self.second_look: int | None = size if self.dynamic and size > max(self.imgsz) else None
        """Input size of the second look at photos whose dice are small (None: no second look;
        a model with a fixed input size has none)."""
        self.second_look_below = float(
            settings.second_look_below if second_look_below is None else second_look_below
        )
        self.second_look_conf = min(settings.second_look_conf, self.conf)
        """Boxes down to this confidence (``DICECAM_SECOND_LOOK_CONF``, 0.1) count when judging
        whether a photo's dice are small: a photo whose far dice the first look sees only
        faintly, or not above ``conf`` at all, still gets the second look, which often finds
        them clearly."""
        self.fit_count = settings.fit_count
        """With the dice count given (``expected_dice``), keep the likeliest dice found, or add
        faint ones the die check holds to be dice, to reach it (``DICECAM_FIT_COUNT``; see
        :mod:`vision.count`)."""
        self.fit_conf = settings.fit_conf
        self.fit_min_verify = settings.fit_min_verify
        self.sure_faint = None
        """Without a dice count, faint boxes the die check and the face classifier are both
        sure of join the dice, marked faint (``DICECAM_SURE_FAINT``; :mod:`vision.faint`);
        None without both models or with the setting off."""
        if settings.sure_faint and self.verify is not None and self.faces is not None:
            self.sure_faint = SureFaint(
                settings.sure_faint_conf, settings.sure_faint_check, settings.sure_faint_face
            )
        self.unsure_below = settings.unsure_below
        """A die whose face the classifier gives less than this probability is marked
        ``unsure`` (``DICECAM_UNSURE_BELOW``, 0.6; 0: never)."""
        self.mirror = settings.mirror if mirror is None else bool(mirror)
        """Photos with a doubtful die are read again mirrored, for a second opinion on their
        boxes (``DICECAM_MIRROR``; see :mod:`vision.fusion`)."""
        if warmup:  # at the shape of a 640x480 camera frame, the most common one
            shape = self.input_shape(480, 640)
            self._run(np.zeros((self.fixed_batch or 1, 3, *shape), np.float32))
            if self.second_look:
                shape = self.input_shape(480, 640, size=self.second_look)
                self._run(np.zeros((1, 3, *shape), np.float32), second=True)

    def _first_look(self, own: tuple[int, int], size: int | None) -> tuple[int, int]:
        """The first look's (height, width): the model's ``own``, or ``size`` a side."""
        if size is None or size == max(own):
            return own
        if not self.dynamic:
            raise ValueError(
                f"{self.model_path}: exported with a fixed {own[1]}x{own[0]} input, so it reads "
                f"only at that size; got imgsz {size} (export it with a dynamic input to choose)"
            )
        if size < self.stride or size % self.stride:
            raise ValueError(
                f"expected imgsz to be a multiple of the model's stride {self.stride}, got {size}"
            )
        return size, size

    # -- public API ------------------------------------------------------------------------

    def read(
        self, image: ImageSource | LoadedImage, *, expected_dice: int | None = None
    ) -> Reading:
        """Read one photo: a path, bytes, a PIL image, a numpy BGR array or a :class:`LoadedImage`.

        ``expected_dice``: how many dice were rolled, when known. The reading is then fitted to
        that count (the likeliest dice kept, faint ones added, a photo still short read again at
        the second look's size; see :mod:`vision.count`, ``DICECAM_FIT_COUNT=0`` turns it off)
        and says how many dice are ``missing``.

        Raises:
            ImageError: the input is not a readable image.
        """
        return self._read_all([image], 1, _dice_count(expected_dice), single=True)[0]

    def read_batch(
        self,
        images: Iterable[ImageSource | LoadedImage],
        *,
        batch_size: int = 8,
        expected_dice: int | None = None,
    ) -> list[Reading]:
        """Read many photos, several per inference when the model's batch size allows.

        Each image is decoded and letterboxed once; a model exported with a fixed batch of 1 runs
        them one after another on the same session. ``latency_ms`` of each reading is its own
        decoding and preprocessing plus its share of the batch's inference.

        Raises:
            ImageError: an input is not a readable image (nothing is returned then; load inputs
                with :func:`vision.load_image` first to handle bad ones one by one).
        """
        if batch_size < 1:
            raise ValueError(f"expected batch_size >= 1, got {batch_size}")
        expected_dice = _dice_count(expected_dice)
        if isinstance(images, (str, bytes, bytearray, memoryview, os.PathLike)):
            raise TypeError(
                f"read_batch takes a list of images, got one {type(images).__name__}: "
                "use read() for a single photo, or wrap it in a list"
            )
        return self._read_all(images, batch_size, expected_dice, single=False)

    def input_shape(self, height: int, width: int, *, size: int | None = None) -> tuple[int, int]:
        """The model input (height, width) for a photo of ``height`` x ``width`` pixels.

        A fixed-size model always reads at ``imgsz``. A dynamic one fits the photo in a square of
        ``size`` (default ``max(imgsz)``) and pads only up to the next multiple of the stride, as
        ultralytics' rectangular inference does: a 640x480 photo at 416 runs at 416x320, a
        quarter fewer pixels than 416x416.

        Example:
            ``DiceReader(...).input_shape(480, 640)`` is ``(320, 416)`` for a dynamic 416 model.
        """
        if not self.dynamic:
            return self.imgsz
        return rect_input_shape(height, width, size=size or max(self.imgsz), stride=self.stride)

    def __repr__(self) -> str:
        h, w = self.imgsz
        return f"DiceReader(model={str(self.model_path)!r}, imgsz={w}x{h}, conf={self.conf}, iou={self.iou})"

    # -- internals -------------------------------------------------------------------------

    def _run(self, blob: NDArray[np.float32], *, second: bool = False) -> NDArray[np.float32]:
        """Run the detector; the second look runs in a lane of its own (see
        :class:`vision.backends.DetectorModel`)."""
        return self._session.run(blob, lane=1 if second else 0)

    def _read_all(
        self,
        images: Iterable[ImageSource | LoadedImage],
        batch_size: int,
        expected_dice: int | None,
        *,
        single: bool,
    ) -> list[Reading]:
        """Read ``images`` in chunks of the model's fixed batch, else of ``batch_size``;
        ``single``: the one photo of :meth:`read`, whose error needs no place in a batch."""
        step = self.fixed_batch or batch_size
        readings: list[Reading] = []
        chunk: list[tuple[int, ImageSource | LoadedImage]] = []
        for item in enumerate(images):
            chunk.append(item)
            if len(chunk) == step:
                readings.extend(self._read_chunk(chunk, expected_dice, single))
                chunk = []
        if chunk:
            readings.extend(self._read_chunk(chunk, expected_dice, single))
        return readings

    def _read_chunk(
        self,
        chunk: list[tuple[int, ImageSource | LoadedImage]],
        expected_dice: int | None,
        single: bool,
    ) -> list[Reading]:
        loaded: list[tuple[LoadedImage, float]] = []
        for k, image in chunk:
            t0 = time.perf_counter()
            try:
                img = image if isinstance(image, LoadedImage) else self._load(image)
            except ImageError as exc:
                if single or isinstance(image, (str, os.PathLike)):
                    raise  # there is one image only, or the message names the file
                raise ImageError(f"image {k} of the batch: {exc}") from None
            loaded.append((img, time.perf_counter() - t0))
        return read_chunk(self, loaded, expected_dice)

    def _load(self, image: ImageSource) -> LoadedImage:
        s = self.settings
        return load_image(
            image,
            min_long_side=self.decode_side,
            max_image_pixels=s.max_image_pixels,
            max_decoded_pixels=s.max_decoded_pixels,
        )


def _dice_count(value: object) -> int | None:
    """``expected_dice`` as a plain int of 1 or more (a numpy integer is taken), or None.

    Example:
        >>> _dice_count(None), _dice_count(6)
        (None, 6)
    """
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError(f"expected a dice count of 1 or more, got expected_dice={value!r}")
    try:
        count = operator.index(value)
    except TypeError:
        raise ValueError(
            f"expected a whole dice count of 1 or more, got expected_dice={value!r}"
        ) from None
    if count < 1:
        raise ValueError(f"expected a dice count of 1 or more, got expected_dice={count}")
    return count
