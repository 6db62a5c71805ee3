"""Cut die crops out of YOLO-format datasets, for the face classifier."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.faces import CROP_SIZE, crop_die
from vision.io import TRAINING_SUFFIXES
from vision.synth.labels import COCKED_CLASS
from vision.yolo_dataset import DatasetError, load_labels, sibling_path

from .classifier import N_CLASSES

__all__ = [
    "CROP_SIZE",
    "crop_die",
    "iter_yolo_items",
    "load_crops",
    "read_photo",
    "say_unreadable",
]


def iter_yolo_items(image_dirs: Iterable[Path]) -> Iterator[tuple[Path, Path]]:
    """(image, label) pairs of YOLO folders laid out as ``.../images/...`` and ``.../labels/...``."""
    for image_dir in image_dirs:
        image_dir = Path(image_dir)
        for image in sorted(image_dir.rglob("*")):
            if image.suffix.lower() not in TRAINING_SUFFIXES:
                continue
            label = sibling_path(image)
            if label.is_file():
                yield image, label


def read_photo(path: Path, unreadable: list[Path] | None = None) -> np.ndarray | None:
    """The photo at ``path`` (BGR uint8), or None when OpenCV cannot read it: its path is then
    added to ``unreadable`` (when given), for the trainer to say (:func:`say_unreadable`)."""
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None and unreadable is not None:
        unreadable.append(Path(path))
    return image


def say_unreadable(
    unreadable: Sequence[Path], what: str, log: Callable[[str], Any] = print
) -> None:
    """Log how many labelled photos OpenCV could not read for ``what`` and which (three named,
    one that is not there said so, then how many more): their dice are left out. Nothing when
    there are none."""
    if not unreadable:
        return
    more = f" (and {len(unreadable) - 3} more)" if len(unreadable) > 3 else ""
    names = ", ".join(str(p) if Path(p).exists() else f"{p} (no such file)" for p in unreadable[:3])
    photos = "1 labelled photo" if len(unreadable) == 1 else f"{len(unreadable)} labelled photos"
    log(f"{what}: {photos} not readable, left out: {names}{more}")


def load_crops(
    image_dirs: Iterable[Path],
    *,
    jitter: int = 2,
    seed: int = 0,
    size: int = CROP_SIZE,
    max_images: int | None = None,
    unreadable: list[Path] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Crops (N, size, size, 3 uint8 BGR) and classes (N,) from YOLO folders.

    A labelled photo OpenCV cannot read gives no crop; its path is added to ``unreadable``
    when that list is given, for the caller to say (:func:`say_unreadable`).

    Each die gives ``1 + jitter`` crops: the labelled box, then boxes shifted and scaled at random
    the way a detector's boxes err. Labels are read as ``dicecam eval`` reads them
    (:func:`vision.yolo_dataset.load_labels`: polygons as their bounding box). A flat die whose
    synthetic sidecar says its top face is washed out in the photo (no pips to see:
    :func:`vision.matching.face_legible`) gives no crop: its label would teach a guess.

    Raises:
        DatasetError: a label line that is not ``class cx cy w h`` (or a polygon), or a class
            other than 0-6.
    """
    rng = np.random.default_rng(seed)
    crops: list[np.ndarray] = []
    classes: list[int] = []
    for n, (image_path, label_path) in enumerate(iter_yolo_items(image_dirs)):
        if max_images is not None and n >= max_images:
            break
        image = read_photo(image_path, unreadable)
        if image is None:
            continue
        h, w = image.shape[:2]
        item = load_labels(image_path)
        legible = item.legible or [None] * len(item.labels)
        for (cls, cx, cy, bw, bh), shows in zip(item.labels, legible, strict=True):
            if not 0 <= cls < N_CLASSES:
                raise DatasetError(
                    f"{label_path}: expected classes 0-{N_CLASSES - 1} (faces 1-6, cocked), "
                    f"got class {cls}"
                )
            if shows is False and cls != COCKED_CLASS:  # a cocked die is told by its shape
                continue
            box = ((cx - bw / 2) * w, (cy - bh / 2) * h, (cx + bw / 2) * w, (cy + bh / 2) * h)
            if min(box[2] - box[0], box[3] - box[1]) < 3:
                continue
            crops.append(crop_die(image, box, size))
            classes.append(cls)
            bwp, bhp = box[2] - box[0], box[3] - box[1]
            for _ in range(jitter):
                dx, dy = rng.normal(0, 0.08, 2) * (bwp, bhp)
                s = float(np.exp(rng.normal(0, 0.1)))
                ncx, ncy = (box[0] + box[2]) / 2 + dx, (box[1] + box[3]) / 2 + dy
                jb = (ncx - bwp * s / 2, ncy - bhp * s / 2, ncx + bwp * s / 2, ncy + bhp * s / 2)
                crops.append(crop_die(image, jb, size))
                classes.append(cls)
    if not crops:
        return np.zeros((0, size, size, 3), np.uint8), np.zeros((0,), np.int64)
    return np.stack(crops), np.asarray(classes, np.int64)
