"""What an ultralytics detector export says: its metadata (input size, stride, class names) and
its output, decoded into boxes, confidences, values and cocked flags.

Two layouts exist: raw ``(4 + nc, N)`` (boxes ``cx, cy, w, h`` in input pixels, then one score
per class; YOLO11 exported with ``nms=False``) and end-to-end ``(K, 6)`` rows of
``x1, y1, x2, y2, score, class`` (YOLO26). Class names ``'1'`` to ``'6'`` (or ``'one'`` to
``'six'``) are top faces and a name containing ``'cock'`` marks a leaning die.

Example:
    >>> import numpy as np
    >>> roles = ClassRoles.from_names({0: "1", 1: "2", 2: "3", 3: "4", 4: "5", 5: "6"})
    >>> pred = np.zeros((10, 1), np.float32)
    >>> pred[:4, 0] = [50, 50, 20, 20]; pred[4 + 2, 0] = 0.9  # a 3
    >>> boxes, conf, values, cocked = decode_raw(pred, roles, conf=0.25)
    >>> boxes.tolist(), values.tolist()
    ([[40.0, 40.0, 60.0, 60.0]], [3])
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "ClassRoles",
    "DetectorInfo",
    "decode_end2end",
    "decode_raw",
    "default_names",
    "metadata_imgsz",
    "metadata_names",
    "metadata_stride",
]

_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
MAX_CANDIDATES = 30000
"""At most this many boxes above the confidence threshold go on to NMS (as ultralytics)."""

Decoded = tuple[
    "NDArray[np.float32]", "NDArray[np.float32]", "NDArray[np.intp]", "NDArray[np.bool_]"
]


@dataclass(frozen=True)
class ClassRoles:
    """What each detector class means: the class index of faces 1..6 and of 'cocked' (or None).

    A one-class detector (any name) only finds dice: its single class stands for every face.
    """

    num_classes: int
    faces: NDArray[np.intp]
    cocked: int | None = None

    @classmethod
    def from_names(cls, names: dict[int, str]) -> ClassRoles:
        """Roles from the model's ``names``.

        Raises:
            ValueError: more than one class and they are not faces '1' to '6' (and 'cocked').
        """
        if len(names) == 1:
            return cls(1, np.zeros(6, np.intp))
        faces: dict[int, int] = {}
        cocked = None
        for idx, name in names.items():
            key = name.strip().lower()
            value = int(key) if key.isdigit() else _WORDS.get(key)
            if value is not None and 1 <= value <= 6 and value not in faces:
                faces[value] = idx
            elif "cock" in key:
                cocked = idx
            else:
                raise ValueError(
                    f"expected classes named '1' to '6' (and 'cocked'), got class {idx} = {name!r}"
                )
        if sorted(faces) != [1, 2, 3, 4, 5, 6]:
            raise ValueError(f"expected one class per face 1 to 6, got names {names}")
        return cls(len(names), np.array([faces[v] for v in range(1, 7)], np.intp), cocked)


def metadata_imgsz(metadata: dict[str, str], h: object, w: object) -> tuple[int, int]:
    """The input (height, width): the ONNX input's own when fixed, else the ``imgsz`` metadata
    (640 when absent or unreadable)."""
    if isinstance(h, int) and isinstance(w, int):
        return h, w
    raw = metadata.get("imgsz")
    try:
        size = ast.literal_eval(raw) if raw else 640
    except (ValueError, SyntaxError):
        size = 640
    if isinstance(size, int):
        return size, size
    return int(size[0]), int(size[1])


def metadata_stride(metadata: dict[str, str]) -> int:
    """The model's largest stride (32 when absent or unreadable)."""
    try:
        stride = int(metadata.get("stride", "32"))
    except ValueError:
        stride = 32
    return stride if stride > 0 else 32


def metadata_names(metadata: dict[str, str]) -> dict[int, str]:
    """Class names from the ``names`` metadata ({} when absent).

    Raises:
        ValueError: the metadata is there but unreadable.
    """
    raw = metadata.get("names")
    if not raw:
        return {}
    try:
        names = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        raise ValueError(f"unreadable 'names' metadata {raw!r}") from None
    if isinstance(names, list):
        names = dict(enumerate(names))
    return {int(k): str(v) for k, v in names.items()}


def default_names(channels: object, end2end: bool) -> dict[int, str]:
    """Names for a model without metadata: classes 0..5 are faces 1..6, a 7th is 'cocked'."""
    nc = channels - 4 if isinstance(channels, int) and not end2end else 6
    return {i: str(i + 1) for i in range(min(nc, 6))} | ({6: "cocked"} if nc > 6 else {})


@dataclass(frozen=True)
class DetectorInfo:
    """What a detector export says of itself: batch, input size, stride, layout and classes."""

    fixed_batch: int | None
    """The batch size it was exported with, or None when dynamic."""
    imgsz: tuple[int, int]
    """Input (height, width)."""
    dynamic: bool
    """Exported with dynamic height and width."""
    stride: int
    end2end: bool
    """Output rows ``x1, y1, x2, y2, score, class`` (YOLO26) rather than raw scores."""
    names: dict[int, str]
    roles: ClassRoles

    @classmethod
    def read(
        cls, metadata: dict[str, str], input_shape: Sequence[object], output_shape: Sequence[object]
    ) -> DetectorInfo:
        """From the export's metadata and its input and output shapes.

        Raises:
            ValueError: the input is not an image batch, or the names do not give six faces.
        """
        if len(input_shape) != 4 or input_shape[1] not in (3, "3"):
            raise ValueError(
                f"expected an image input of shape (batch, 3, height, width), got {input_shape}"
            )
        batch, _, h, w = input_shape
        end2end = metadata.get("end2end", "False").strip().lower() == "true"
        names = metadata_names(metadata) or default_names(output_shape[1], end2end)
        return cls(
            fixed_batch=batch if isinstance(batch, int) else None,
            imgsz=metadata_imgsz(metadata, h, w),
            dynamic=not (isinstance(h, int) and isinstance(w, int)),
            stride=metadata_stride(metadata),
            end2end=end2end,
            names=names,
            roles=ClassRoles.from_names(names),
        )


def decode_raw(pred: NDArray[np.float32], roles: ClassRoles, *, conf: float) -> Decoded:
    """Boxes (x1, y1, x2, y2 in input pixels), confidences, values and cocked flags of one image's
    raw output, before NMS."""
    nc = 4 + roles.num_classes
    if pred.shape[0] != nc and pred.shape[-1] == nc:
        pred = pred.T  # (N, 4 + nc) layout
    scores = pred[4:]
    best = scores.max(axis=0)
    cand = np.flatnonzero(best >= conf)
    if cand.size > MAX_CANDIDATES:
        cand = cand[np.argsort(-best[cand])[:MAX_CANDIDATES]]
    p = pred[:, cand]
    face_scores = p[4:][roles.faces]
    values = face_scores.argmax(axis=0) + 1
    if roles.cocked is not None:
        cocked = p[4 + roles.cocked] > face_scores.max(axis=0)
    else:
        cocked = np.zeros(cand.size, bool)
    cx, cy, w, h = p[0], p[1], p[2], p[3]
    boxes = np.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=1)
    return boxes, best[cand], values, cocked


def decode_end2end(pred: NDArray[np.float32], roles: ClassRoles, *, conf: float) -> Decoded:
    """The same from end-to-end rows; a cocked die has no face guess there: value 0."""
    rows = pred[pred[:, 4] >= conf]
    cls = rows[:, 5].astype(np.intp)
    value_of = np.zeros(max(int(cls.max(initial=0)), int(roles.faces.max())) + 1, np.intp)
    value_of[roles.faces] = np.arange(1, 7)
    values = value_of[cls]
    cocked = cls == roles.cocked if roles.cocked is not None else np.zeros(len(rows), bool)
    return rows[:, :4].copy(), rows[:, 4].copy(), values, cocked
