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
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vision.atomic import atomic_copy
from vision.matching import match_dice
from vision.verify import VERIFY_CONTEXT, VERIFY_THRESHOLD

from .crops import say_unreadable
from .mining import MINE_CONF, MinedCrops, mine_crops, synth_items, yolo_items
from .offtable import train_main

__all__ = ["calibrate_verifier", "train_verifier"]


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
        ValueError: ``keep`` is not a share (more than 0, at most 1); the mined boxes hold no
            die or no false one.
    """
    from vision import DiceReader

    _check_keep(keep)

    from .classifier import train_classifier
    from .offtable import save_context_model, share_at, val_probabilities

    t0 = time.perf_counter()
    cache = Path(cache) if cache is not None else None
    if cache is not None and cache.is_file():
        z = np.load(cache)
        x, y, vx, vy = z["x"], z["y"], z["vx"], z["vy"]
        log(f"mined crops from {cache}")
    else:
        reader = DiceReader(model, conf=MINE_CONF, table=None, cocked=False, verify=False)
        parts = {}
        unreadable: list[Path] = []
        for split in ("train", "val"):
            mined = MinedCrops()
            for root in data:
                items = synth_items(root, split, unreadable=unreadable)
                mine_crops(reader, items, context=context, size=size, into=mined)
            for folder in real:
                mine_crops(
                    reader,
                    yolo_items(folder, split, unreadable=unreadable),
                    context=context,
                    size=size,
                    background=background,
                    into=mined,
                )
            parts[split] = mined.arrays(size)
            log(f"{split}: {len(mined.labels)} boxes mined, {sum(mined.labels)} dice")
        say_unreadable(unreadable, "die check", log)  # their dice are left out
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
        false = p[vy == 0]
        if (vy == 1).any():
            threshold = round(min(max(_keeping(p[vy == 1], keep), 0.01), 0.5), 3)
        figures |= {
            "val_dice_kept": share_at(p[vy == 1], threshold),
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

    Raises:
        ValueError: ``keep`` is not a share (more than 0, at most 1).
    """
    _check_keep(keep)

    from vision import DiceReader
    from vision.verify import VerifyModel, verify_model_for

    from .offtable import add_metadata

    onnx = verify_model_for(base)
    if not onnx.is_file():
        return None
    start = VerifyModel(onnx)
    reader = DiceReader(base, table=None, cocked=False, verify=False)
    p: list[float] = []
    unreadable: list[Path] = []
    for folder in new:
        for _, image, labelled, _ in yolo_items(folder, None, unreadable=unreadable):
            rgb = image[..., ::-1].copy()
            boxes = [d.box for d in reader.read(rgb).dice]
            matched = [boxes[j] for _, j in match_dice(labelled, boxes)]
            p.extend(start.probability(rgb, matched).tolist())
    say_unreadable(unreadable, "die check", log)  # their dice are left out
    threshold = start.threshold
    if p:
        threshold = round(max(min(threshold, _keeping(np.asarray(p), keep)), floor), 4)
    if Path(out).resolve() != onnx.resolve():
        atomic_copy(onnx, out)
    add_metadata(Path(out), {"threshold": threshold, "calibrated_from": str(onnx)})
    dropped = int(sum(q < start.threshold for q in p))
    log(
        f"die check: threshold {start.threshold:g} -> {threshold:g} "
        f"({dropped} of {len(p)} new dice were under the old one)"
    )
    return {"dice": len(p), "dropped_before": dropped, "threshold": threshold}


def _check_keep(keep: float) -> None:
    if not 0 < keep <= 1:
        raise ValueError(f"keep must be a share of the dice, more than 0 and at most 1, got {keep}")


def _keeping(p: np.ndarray, keep: float) -> float:
    """The probability at or above which ``keep`` of the dice's probabilities ``p`` lie."""
    return float(np.sort(p)[int((1 - keep) * len(p))])


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
    return train_main(p, train_verifier, argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
