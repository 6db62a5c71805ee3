"""Mining a detector's boxes on labelled photos, for the die check (:mod:`vision.train.verify`).

The reader runs on each photo and every box it returns becomes a context crop: a box that
matches a labelled die (by centre, as ``dicecam eval`` matches) is a die, a box that matches no
die at all is not, and a box on an unlabelled die (a synthetic die hidden past labelling) is left
out. Random background boxes away from the dice can be added as more negatives.

Example:
    >>> scene_of(Path("dice_59_jpg.rf.d052dc3e.jpg"))
    'dice_59'
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vision.boxes import box_side
from vision.matching import match_dice
from vision.table.dice import context_crop
from vision.verify import VERIFY_CONTEXT

__all__ = [
    "MINE_CONF",
    "MinedCrops",
    "background_boxes",
    "is_val_scene",
    "mine_crops",
    "scene_of",
    "synth_items",
    "yolo_items",
]

MINE_CONF = 0.1
"""Detector confidence down to which boxes are mined: below the reader's 0.25, so the model also
sees the near misses it will meet when a photo differs from the training ones."""

Box = tuple[float, float, float, float]


@dataclass(slots=True)
class MinedCrops:
    """Context crops of detected boxes (N x S x S x 3 BGR uint8) and their labels (1: a die)."""

    crops: list[np.ndarray] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)

    def arrays(self, size: int) -> tuple[np.ndarray, np.ndarray]:
        if not self.crops:
            return np.zeros((0, size, size, 3), np.uint8), np.zeros(0, np.int64)
        return np.stack(self.crops), np.asarray(self.labels, np.int64)


def synth_items(
    root: str | Path, split: str, *, unreadable: list[Path] | None = None
) -> Iterator[tuple[Path, np.ndarray, list[Box], list[Box]]]:
    """(photo, BGR image, labelled dice boxes, unlabelled dice boxes) of a `dicecam synth`
    folder's split. A photo OpenCV cannot read is passed over, its path added to
    ``unreadable`` (when given) for the trainer to say.

    Raises:
        FileNotFoundError: the folder has no ``meta/<split>`` sidecars.
    """
    from .crops import read_photo

    meta_dir = Path(root) / "meta" / split
    if not meta_dir.is_dir():
        raise FileNotFoundError(f"expected sidecars in {meta_dir} (a `dicecam synth` folder)")
    for meta_path in sorted(meta_dir.glob("*.json")):
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        path = Path(root) / "images" / split / f"{meta_path.stem}.jpg"
        image = read_photo(path, unreadable)
        if image is None:
            continue
        labelled, hidden = [], []
        for die in meta.get("dice", []):
            box = die.get("box")
            if box:
                (labelled if die.get("labelled") else hidden).append(tuple(box))
        yield path, image, labelled, hidden


_SCENE = re.compile(r"^(.*?)_(?:jpg|jpeg|png)\.rf\.[0-9a-f]+$", re.IGNORECASE)


def scene_of(image: Path) -> str:
    """The scene a photo shows: ``dice_59`` for Roboflow's ``dice_59_jpg.rf.HASH.jpg``, else the
    file's stem.

    Example:
        >>> scene_of(Path("dice_59_jpg.rf.d052dc3e.jpg"))
        'dice_59'
    """
    m = _SCENE.match(image.stem)
    return m.group(1) if m else image.stem


def is_val_scene(scene: str, every: int = 10) -> bool:
    """One scene in ``every``, picked by a stable hash of its name."""
    return zlib.crc32(scene.encode()) % every == 0


def yolo_items(
    image_dir: str | Path,
    split: str | None,
    *,
    limit: int | None = None,
    unreadable: list[Path] | None = None,
) -> Iterator[tuple[Path, np.ndarray, list[Box], list[Box]]]:
    """(photo, BGR image, labelled dice boxes, []) of a YOLO folder's photos that have labels
    (read as ``dicecam eval`` reads them: :func:`vision.yolo_dataset.load_labels`),
    for the ``train`` or ``val`` part of its scenes (:func:`is_val_scene`), or all of them
    (``split`` None); at most ``limit`` photos. A labelled photo OpenCV cannot read is passed
    over, its path added to ``unreadable`` (when given) for the trainer to say."""
    from vision.yolo_dataset import load_labels

    from .crops import iter_yolo_items, read_photo

    n = 0
    for path, _ in iter_yolo_items([Path(image_dir)]):
        if split is not None and is_val_scene(scene_of(path)) != (split == "val"):
            continue
        if limit is not None and n >= limit:
            return
        labels = load_labels(path)
        if not labels.labels:
            continue
        image = read_photo(path, unreadable)
        if image is None:
            continue
        n += 1
        h, w = image.shape[:2]
        yield path, image, [t.box for t in labels.truth(w, h)], []


def background_boxes(
    rng: np.random.Generator, shape: tuple[int, int], dice: Sequence[Box], n: int
) -> list[Box]:
    """Up to ``n`` random square boxes, sized like the photo's dice (0.6 to 1.6 times their
    median side), whose area keeps clear of every die's box grown by half its size."""
    if n <= 0 or not dice:
        return []
    h, w = shape
    side = float(np.median([box_side(b) for b in dice]))
    grown = [
        (
            b[0] - (b[2] - b[0]) / 2,
            b[1] - (b[3] - b[1]) / 2,
            b[2] + (b[2] - b[0]) / 2,
            b[3] + (b[3] - b[1]) / 2,
        )
        for b in dice
    ]
    boxes: list[Box] = []
    for _ in range(n * 10):
        s = side * rng.uniform(0.6, 1.6)
        if s >= min(h, w):
            break
        x, y = rng.uniform(0, w - s), rng.uniform(0, h - s)
        box = (x, y, x + s, y + s)
        if all(box[2] < g[0] or box[0] > g[2] or box[3] < g[1] or box[1] > g[3] for g in grown):
            boxes.append(box)
            if len(boxes) == n:
                break
    return boxes


def mine_crops(
    reader: Any,
    items: Iterable[tuple[Path, np.ndarray, list[Box], list[Box]]],
    *,
    context: float = VERIFY_CONTEXT,
    size: int = 48,
    background: int = 0,
    seed: int = 0,
    into: MinedCrops | None = None,
) -> MinedCrops:
    """Run ``reader`` (a :class:`vision.DiceReader`, table step off) on each photo and keep a
    context crop of every box it finds, labelled by matching against the photo's dice; plus
    ``background`` boxes per photo drawn at random away from its dice (:func:`background_boxes`),
    as negatives."""
    mined = into if into is not None else MinedCrops()
    rng = np.random.default_rng(seed)
    for _, image, labelled, hidden in items:
        for box in background_boxes(rng, image.shape[:2], labelled + hidden, background):
            mined.crops.append(context_crop(image, box, size, context))
            mined.labels.append(0)
        reading = reader.read(image[..., ::-1].copy())
        boxes = [d.box for d in reading.dice]
        if not boxes:
            continue
        matched = {j for _, j in match_dice(labelled, boxes)}
        rest = [j for j in range(len(boxes)) if j not in matched]
        unlabelled = {rest[j] for _, j in match_dice(hidden, [boxes[k] for k in rest])}
        for j, die in enumerate(reading.dice):
            if j in unlabelled:
                continue
            mined.crops.append(context_crop(image, die.box, size, context))
            mined.labels.append(int(j in matched))
    return mined
