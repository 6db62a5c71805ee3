"""Training the off-table die model (``models/dicecam-offtable.onnx``).

The surface outline sees the whole photo at a small size, and its errors sit exactly where dice
that left the surface lie: just past an edge. This second, local model looks at each die with
its surroundings (a crop ``CONTEXT`` times the die's size, ``CROP`` pixels a side) and says
whether the die rests off the playing surface. Its examples are the dice of `dicecam synth`
folders: ``off_table`` dice are positives; dice on the table (flat or cocked) are negatives;
dice in the air are left out (nothing around them says where they will land).

Example:
    python -m vision.train.offtable runs/synth-a runs/synth-b --out models/dicecam-offtable.onnx
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vision.atomic import replacing
from vision.table.dice import CONTEXT, CROP, context_crop

__all__ = [
    "add_metadata",
    "add_run_options",
    "fit_context_model",
    "load_context_crops",
    "save_context_model",
    "share_at",
    "synth_parser",
    "train_main",
    "train_offtable",
    "val_probabilities",
]


def load_context_crops(
    roots: Iterable[str | Path],
    split: str,
    *,
    limit: int | None = None,
    positive: str = "off_table",
    context: float = CONTEXT,
    size: int = CROP,
    unreadable: list[Path] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Context crops (N, size, size, 3 uint8 BGR) and labels (N,: 1 = the die's sidecar state
    is ``positive``: ``off_table`` for the off-table model, ``cocked`` for the cocked one).
    Dice in the air are left out. A photo OpenCV cannot read gives no crop; its path is added
    to ``unreadable`` (when given) for the trainer to say.

    Raises:
        FileNotFoundError: a folder has no ``meta/<split>`` sidecars.
    """
    from .crops import read_photo

    crops: list[np.ndarray] = []
    labels: list[int] = []
    for root in roots:
        meta_dir = Path(root) / "meta" / split
        if not meta_dir.is_dir():
            raise FileNotFoundError(f"expected sidecars in {meta_dir} (a `dicecam synth` folder)")
        for meta_path in sorted(meta_dir.glob("*.json"))[:limit]:
            try:
                meta = json.loads(meta_path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            image = read_photo(Path(root) / "images" / split / f"{meta_path.stem}.jpg", unreadable)
            if image is None:
                continue
            for die in meta.get("dice", []):
                if not die.get("labelled") or not die.get("box") or die["state"] == "in_air":
                    continue
                crops.append(context_crop(image, die["box"], size, context))
                labels.append(int(die["state"] == positive))
    if not crops:
        return np.zeros((0, size, size, 3), np.uint8), np.zeros(0, np.int64)
    return np.stack(crops), np.asarray(labels, np.int64)


def fit_context_model(
    data: Sequence[str | Path],
    *,
    positive: str,
    both: str,
    context: float = CONTEXT,
    size: int = CROP,
    epochs: int = 8,
    batch: int = 128,
    lr: float = 3e-3,
    width: float = 1.0,
    seed: int = 0,
    threads: int | None = None,
    limit: int | None = None,
    log: Any = print,
) -> tuple[Any, dict[str, Any], tuple[np.ndarray, np.ndarray]]:
    """Train a two-class die model on context crops of ``data`` (state ``positive`` against the
    rest; ``both`` names the two in errors). Returns the model, its figures (epochs, dice,
    positives, crop, context, seconds) and the val crops and labels.

    Raises:
        ValueError: the train splits hold no die of one of the two classes.
    """
    from .classifier import train_classifier
    from .crops import say_unreadable

    t0 = time.perf_counter()
    unreadable: list[Path] = []
    crops = {"positive": positive, "context": context, "size": size, "unreadable": unreadable}
    x, y = load_context_crops(data, "train", limit=limit, **crops)
    vx, vy = load_context_crops(data, "val", **crops)
    what = f"{positive.replace('_', '-')} model"
    say_unreadable(unreadable, what, log)  # their dice are left out of it
    if not len(x) or y.min() == y.max():
        raise ValueError(
            f"expected dice both {both} in {list(map(str, data))}, "
            f"got {len(y)} dice, {int(y.sum())} {positive}"
        )
    log(f"{len(x)} train dice ({int(y.sum())} {positive}), {len(vx)} val dice ({int(vy.sum())})")
    model = train_classifier(
        x,
        y,
        epochs=epochs,
        batch=batch,
        lr=lr,
        seed=seed,
        width=width,
        threads=threads,
        val=(vx, vy) if len(vx) else None,
        n_classes=2,
        log=log,
    )
    figures: dict[str, Any] = {
        "epochs": epochs,
        "train_dice": len(x),
        f"train_{positive.split('_')[0]}": int(y.sum()),
        "val_dice": len(vx),
        "crop": size,
        "context": context,
        "train_seconds": round(time.perf_counter() - t0),
    }
    return model, figures, (vx, vy)


def save_context_model(model: Any, out: str | Path, size: int, meta: dict[str, Any]) -> Path:
    """Export ``model`` to ONNX at ``out`` with ``meta`` in its metadata, torch weights beside."""
    from .classifier import export_classifier, save_classifier

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    save_classifier(model, out.with_suffix(".pt"))
    export_classifier(model, out, size=size)
    add_metadata(out, meta)
    return out


def train_offtable(
    data: Sequence[str | Path],
    out: str | Path,
    *,
    epochs: int = 8,
    batch: int = 128,
    lr: float = 3e-3,
    width: float = 1.0,
    threads: int | None = None,
    limit: int | None = None,
    log: Any = print,
) -> dict[str, Any]:
    """Train on the train splits of ``data``, score on their val splits, export ONNX to ``out``
    (torch weights beside it, ``.pt``). Returns the figures for the model card."""
    model, figures, (vx, vy) = fit_context_model(
        data,
        positive="off_table",
        both="on and off the surface",
        epochs=epochs,
        batch=batch,
        lr=lr,
        width=width,
        threads=threads,
        limit=limit,
        log=log,
    )
    if len(vx):
        figures |= _val_figures(model, vx, vy)
    meta = figures | {"task": "dicecam-offtable", "data": ", ".join(map(str, data))}
    save_context_model(model, out, CROP, meta)
    return figures


def _val_figures(model: Any, x: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    p = val_probabilities(model, x)
    return {
        "val_off_recall": share_at(p[y == 1], 0.5),
        "val_on_called_off": share_at(p[y == 0], 0.5),
    }


def val_probabilities(model: Any, x: np.ndarray, *, tta: bool = False) -> np.ndarray:
    """P(second class) of a two-class model on crops ``x`` (N x S x S x 3 BGR uint8), 512 at a
    time; ``tta``: averaged with the mirror images, as the runtime does for such a model."""
    import torch

    from .classifier import _to_tensor

    model.eval()
    probs = []
    with torch.no_grad():
        for i in range(0, len(x), 512):
            t = _to_tensor(x[i : i + 512])
            p = torch.softmax(model(t), 1)
            if tta:
                p = (p + torch.softmax(model(torch.flip(t, dims=(3,))), 1)) / 2
            probs.append(p[:, 1])
    return torch.cat(probs).numpy() if probs else np.zeros(0, np.float32)


def share_at(p: np.ndarray, threshold: float) -> float | None:
    """The share of probabilities ``p`` at or above ``threshold`` (4 decimals), None if empty."""
    return round(float((p >= threshold).mean()), 4) if len(p) else None


def add_metadata(path: Path, meta: dict[str, Any]) -> None:
    """Write ``meta`` into the ONNX file's metadata properties (values as strings), replacing
    the entries of the same keys."""
    import onnx

    model = onnx.load(str(path))
    kept = [(e.key, e.value) for e in model.metadata_props if e.key not in meta]
    del model.metadata_props[:]
    for key, value in [*kept, *meta.items()]:
        entry = model.metadata_props.add()
        entry.key, entry.value = key, str(value)
    with replacing(path) as part:
        onnx.save(model, str(part))


def synth_parser(description: str) -> argparse.ArgumentParser:
    """The parser of a training command that takes `dicecam synth` folders."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument(
        "data", nargs="+", help="`dicecam synth` folders (images/, meta/ with train and val)"
    )
    return p


def add_run_options(p: argparse.ArgumentParser) -> None:
    """Add ``--threads`` and ``--limit`` (train photos per folder) to a training command."""
    p.add_argument("--threads", type=int, default=None)
    p.add_argument(
        "--limit", type=int, default=None, help="at most this many train photos per folder"
    )


def train_main(
    p: argparse.ArgumentParser,
    train: Callable[..., dict[str, Any]],
    argv: Sequence[str] | None,
) -> int:
    """Run a training command: ``train(data, out, **its other options)`` (each option's name
    that of a keyword of ``train``), its figures printed as one JSON line."""
    options = vars(p.parse_args(argv))
    figures = train(options.pop("data"), options.pop("out"), **options)
    print(json.dumps(figures))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = synth_parser("Train the dicecam off-table die model.")
    p.add_argument("--out", default="models/dicecam-offtable.onnx")
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--width", type=float, default=1.0)
    add_run_options(p)
    return train_main(p, train_offtable, argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
