"""Training the die check (``models/dicecam-reader-verify.onnx``, see :mod:`vision.verify`).

The detector also fires on things that are not dice: board-game pieces, sunglasses, remote
controls, the compartments of a tray. This model learns to tell them from dice on the detector's
own mistakes. Its examples are mined: the reader's detector runs at a low confidence on labelled
photos, and every box it returns becomes a crop (``--context`` times the box's size):

- a box that matches a labelled die (by centre, as ``dicecam eval`` matches) is a positive;
- a box that matches no die at all is a negative;
- a box that matches an unlabelled die (a synthetic die hidden past labelling) is left out.

`dicecam synth` folders give complete labels (train split to train, val split to validate). A
YOLO folder of real photos (``--real``) adds its labelled photos; photos with no label at all
are skipped, since a public set leaves some photos of dice unlabelled. Real photos are split by
scene (Roboflow exports name augmented copies ``SCENE_jpg.rf.HASH.jpg``), one scene in ten to
validation, so that copies of a validation scene never train.

Example:
    python -m vision.train.verify runs/surf/synth-s11 \\
        --real ../shared/datasets/roboflow-dice/train/images
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from vision.metrics import match_dice
from vision.table.dice import context_crop
from vision.verify import VERIFY_CONTEXT, VERIFY_THRESHOLD

__all__ = [
    "MinedCrops",
    "background_boxes",
    "mine_crops",
    "synth_items",
    "calibrate_verifier",
    "train_verifier",
    "yolo_items",
]

MINE_CONF = 0.1
"""Detector confidence down to which boxes are mined: below the reader's 0.25, so the model also
sees the near misses it will meet when a photo differs from the training ones."""

Box = tuple[float, float, float, float]


@dataclass(slots=True)
class MinedCrops:
    """Context crops of detected boxes (N x S x S x 3 BGR uint8), their labels (1: a die), the
    detector's confidence, and the photo each came from."""

    crops: list[np.ndarray] = field(default_factory=list)
    labels: list[int] = field(default_factory=list)
    conf: list[float] = field(default_factory=list)
    source: list[str] = field(default_factory=list)

    def arrays(self, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not self.crops:
            return np.zeros((0, size, size, 3), np.uint8), np.zeros(0, np.int64), np.zeros(0)
        return (
            np.stack(self.crops),
            np.asarray(self.labels, np.int64),
            np.asarray(self.conf, np.float32),
        )


def synth_items(
    root: str | Path, split: str
) -> Iterator[tuple[Path, np.ndarray, list[Box], list[Box]]]:
    """(photo, BGR image, labelled dice boxes, unlabelled dice boxes) of a `dicecam synth`
    folder's split.

    Raises:
        FileNotFoundError: the folder has no ``meta/<split>`` sidecars.
    """
    import cv2

    meta_dir = Path(root) / "meta" / split
    if not meta_dir.is_dir():
        raise FileNotFoundError(f"expected sidecars in {meta_dir} (a `dicecam synth` folder)")
    for meta_path in sorted(meta_dir.glob("*.json")):
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        path = Path(root) / "images" / split / f"{meta_path.stem}.jpg"
        image = cv2.imread(str(path))
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
    image_dir: str | Path, split: str | None, *, limit: int | None = None
) -> Iterator[tuple[Path, np.ndarray, list[Box], list[Box]]]:
    """(photo, BGR image, labelled dice boxes, []) of a YOLO folder's photos that have labels,
    for the ``train`` or ``val`` part of its scenes (:func:`is_val_scene`), or all of them
    (``split`` None); at most ``limit`` photos."""
    import cv2

    from .crops import iter_yolo_items

    n = 0
    for path, label in iter_yolo_items([Path(image_dir)]):
        if split is not None and is_val_scene(scene_of(path)) != (split == "val"):
            continue
        if limit is not None and n >= limit:
            return
        rows = [r for r in (line.split() for line in label.read_text().splitlines()) if len(r) == 5]
        image = cv2.imread(str(path)) if rows else None
        if image is None:
            continue
        n += 1
        h, w = image.shape[:2]
        boxes = []
        for r in rows:
            cx, cy, bw, bh = (float(v) for v in r[1:])
            boxes.append(
                ((cx - bw / 2) * w, (cy - bh / 2) * h, (cx + bw / 2) * w, (cy + bh / 2) * h)
            )
        yield path, image, boxes, []


def background_boxes(
    rng: np.random.Generator, shape: tuple[int, int], dice: Sequence[Box], n: int
) -> list[Box]:
    """Up to ``n`` random square boxes, sized like the photo's dice (0.6 to 1.6 times their
    median side), whose area keeps clear of every die's box grown by half its size."""
    if n <= 0 or not dice:
        return []
    h, w = shape
    side = float(np.median([max(b[2] - b[0], b[3] - b[1]) for b in dice]))
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
    for path, image, labelled, hidden in items:
        for box in background_boxes(rng, image.shape[:2], labelled + hidden, background):
            mined.crops.append(context_crop(image, box, size, context))
            mined.labels.append(0)
            mined.conf.append(0.0)
            mined.source.append(path.name)
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
            mined.conf.append(die.confidence)
            mined.source.append(path.name)
    return mined


def train_verifier(
    data: Sequence[str | Path],
    out: str | Path,
    *,
    real: Sequence[str | Path] = (),
    model: str | Path | None = None,
    epochs: int = 10,
    batch: int = 128,
    lr: float = 3e-3,
    context: float = VERIFY_CONTEXT,
    size: int = 48,
    keep: float = 0.998,
    background: int = 8,
    threads: int | None = None,
    cache: str | Path | None = None,
    seed: int = 0,
    log: Any = print,
) -> dict[str, Any]:
    """Mine boxes of ``model``'s detector (default the shipped reader) on ``data`` (synth
    folders) and ``real`` (YOLO photo folders), train, pick the threshold that keeps ``keep`` of
    the validation dice, and export ONNX to ``out`` with its metadata. ``cache``: an ``.npz``
    of the mined crops, reused when present. Returns the figures for the model card.

    Raises:
        ValueError: the mined boxes hold no die or no false one.
    """
    from vision import DiceReader

    from .classifier import train_classifier
    from .offtable import save_context_model, val_probabilities

    t0 = time.perf_counter()
    cache = Path(cache) if cache is not None else None
    if cache is not None and cache.is_file():
        z = np.load(cache)
        x, y, vx, vy = z["x"], z["y"], z["vx"], z["vy"]
        log(f"mined crops from {cache}")
    else:
        reader = DiceReader(model, conf=MINE_CONF, table=None, cocked=False, verify=False)
        parts = {}
        for split in ("train", "val"):
            mined = MinedCrops()
            for root in data:
                mine_crops(reader, synth_items(root, split), context=context, size=size, into=mined)
            for folder in real:
                mine_crops(
                    reader,
                    yolo_items(folder, split),
                    context=context,
                    size=size,
                    background=background,
                    into=mined,
                )
            parts[split] = mined.arrays(size)[:2]
            log(f"{split}: {len(mined.labels)} boxes mined, {sum(mined.labels)} dice")
        (x, y), (vx, vy) = parts["train"], parts["val"]
        if cache is not None:
            cache.parent.mkdir(parents=True, exist_ok=True)
            np.savez(cache, x=x, y=y, vx=vx, vy=vy)
    if not len(y) or y.min() == y.max():
        raise ValueError(
            f"expected mined boxes both dice and not, got {len(y)} boxes, {int(y.sum())} dice"
        )
    net = train_classifier(
        x,
        y,
        epochs=epochs,
        batch=batch,
        lr=lr,
        seed=seed,
        threads=threads,
        val=(vx, vy) if len(vx) else None,
        n_classes=2,
        log=log,
    )
    figures: dict[str, Any] = {
        "epochs": epochs,
        "train_boxes": len(x),
        "train_false": int((y == 0).sum()),
        "val_boxes": len(vx),
        "val_false": int((vy == 0).sum()),
        "crop": size,
        "context": context,
        "train_seconds": round(time.perf_counter() - t0),
    }
    threshold = VERIFY_THRESHOLD
    if len(vx):
        p = val_probabilities(net, vx, tta=True)
        dice, false = np.sort(p[vy == 1]), p[vy == 0]
        threshold = float(dice[int((1 - keep) * len(dice))]) if len(dice) else threshold
        threshold = round(min(max(threshold, 0.01), 0.5), 3)
        figures |= {
            "val_dice_kept": round(float((p[vy == 1] >= threshold).mean()), 4),
            "val_false_dropped": round(float((false < threshold).mean()), 4)
            if len(false)
            else None,
        }
    figures["threshold"] = threshold
    meta = figures | {"task": "dicecam-verify", "tta": True, "data": ", ".join(map(str, data))}
    save_context_model(net, out, size, meta)
    return figures


def calibrate_verifier(
    base: str | Path,
    new: Sequence[str | Path],
    out: str | Path,
    *,
    keep: float = 0.998,
    floor: float = 0.01,
    log: Any = print,
) -> dict[str, Any] | None:
    """Copy the die check of reader ``base`` (``NAME-verify.onnx``) to ``out`` with a threshold
    that keeps ``keep`` of the dice its detector finds in ``new`` (YOLO folders of a new dice
    set), if that is lower than its own (never under ``floor``): a fine-tuned reader must not
    drop the new dice. Returns figures, or None when the reader has no die check.

    Retraining the check on a few dozen photos was tried and made it forget the false boxes it
    had learned (see the model card), so only its threshold moves.
    """
    import shutil

    from vision import DiceReader
    from vision.verify import VerifyModel, verify_model_for

    from .offtable import add_metadata

    onnx = verify_model_for(base)
    if not onnx.is_file():
        return None
    start = VerifyModel(onnx)
    reader = DiceReader(base, table=None, cocked=False, verify=False)
    p: list[float] = []
    for folder in new:
        for _, image, labelled, _ in yolo_items(folder, None):
            boxes = [d.box for d in reader.read(image[..., ::-1].copy()).dice]
            matched = [boxes[j] for _, j in match_dice(labelled, boxes)]
            p.extend(start.probability(image[..., ::-1].copy(), matched).tolist())
    threshold = start.threshold
    if p:
        lowest = float(np.sort(p)[int((1 - keep) * len(p))])
        threshold = round(max(min(threshold, lowest), floor), 4)
    shutil.copyfile(onnx, out)
    add_metadata(Path(out), {"threshold": threshold, "calibrated_from": str(onnx)})
    dropped = int(sum(q < start.threshold for q in p))
    log(
        f"die check: threshold {start.threshold:g} -> {threshold:g} "
        f"({dropped} of {len(p)} new dice were under the old one)"
    )
    return {"dice": len(p), "dropped_before": dropped, "threshold": threshold}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Train the dicecam die check (false detections).")
    p.add_argument("data", nargs="*", help="`dicecam synth` folders (meta/ with train and val)")
    p.add_argument("--real", nargs="*", default=[], help="YOLO folders of real labelled photos")
    p.add_argument("--model", default=None, help="reader whose detector is mined (default shipped)")
    p.add_argument("--out", default="models/dicecam-reader-verify.onnx")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--context", type=float, default=VERIFY_CONTEXT)
    p.add_argument("--size", type=int, default=48, help="crop side in pixels")
    p.add_argument("--keep", type=float, default=0.998, help="share of val dice to keep")
    p.add_argument(
        "--background", type=int, default=8, help="random boxes per real photo, as negatives"
    )
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--cache", default=None, help=".npz of mined crops (reused when present)")
    a = p.parse_args(argv)
    figures = train_verifier(
        a.data,
        a.out,
        real=a.real,
        model=a.model,
        epochs=a.epochs,
        context=a.context,
        size=a.size,
        keep=a.keep,
        background=a.background,
        threads=a.threads,
        cache=a.cache,
    )
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
