"""Training the playing-surface outline model (``models/dicecam-surface.onnx``).

A small fully-convolutional net (about 140k parameters at ``--width 1``, 313k at 1.5) segments each
photo at 1/4 of its square input (``--input``, 128 by default). With ``--layers 1`` (the shipped
model, at width 1.5) it marks the playing surface itself: the table top, or the tray or box
interior when the dice were rolled in one. With ``--layers 3`` it marks three layers, off (floor,
walls, props), table top and tray interior, and the runtime's :func:`~vision.table.play_surface`
keeps the tray when one is in view: the table is then labelled table whether or not a tray stands
on it, a more local task (measured in the surface model card). Targets come from the synthetic
sidecars (``meta/<split>/<name>.json``: ``outline`` is the playing surface, ``table_outline`` the
table top, rebuilt from the scene for older sets; null = fills the frame, ``[]`` = not in view).

``--real DIR`` adds real photos whose dice all lie on the surface (train splits only): the
convex span of their dice is labelled surface and the rest of each photo is left out of the
loss (tried twice, weights 4 and 1, not shipped: see the surface model card).

``--dice`` trains a dice-aware model: a fourth input channel maps where the dice lie (the
sidecars' dice; the reader's boxes at run time). Tried, not shipped (see the surface model card).

``--min-certainty`` is written into the model: the runtime gives no outline for a photo whose
grid is less certain than that (:func:`~vision.table.surface_certainty`).

Example:
    python -m vision.train.surface runs/synth-a runs/synth-b --width 1.5 --min-certainty 0.4 \
        --out models/dicecam-surface.onnx
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vision.atomic import replacing
from vision.table.surface import LAYERS, play_surface
from vision.train.crops import say_unreadable
from vision.train.surface_batches import BatchMaker, one_cycle, torch_device
from vision.train.surface_data import (
    CACHE_RATIO,
    INPUT,
    PHOTOMETRIC,
    STRIDE,
    augmented_batch,
    edge_cells,
    load_real_surface,
    load_surface_split,
    plain_batch,
    region_codes,
)
from vision.train.surface_net import (
    SurfaceNet,
    build_net,
    export_surface,
    probabilities,
    surface_loss,
)

__all__ = ["SurfaceNet", "export_surface", "load_surface_split", "region_codes", "train_surface"]


def _iou(probs: np.ndarray, target: np.ndarray) -> float:
    """IoU of the playing surface the runtime derives from ``probs`` with the true one."""
    p, t = play_surface(probs) >= 0.5, target >= 0.5
    union = np.logical_or(p, t).sum()
    return float(np.logical_and(p, t).sum() / union) if union else 1.0


def train_surface(
    data: str | Path | Sequence[str | Path],
    out: str | Path,
    *,
    input_size: int = INPUT,
    layers: int = 1,
    width: float = 1.0,
    min_certainty: float = 0.0,
    epochs: int = 30,
    batch: int = 32,
    lr: float = 3e-3,
    seed: int = 0,
    threads: int = 2,
    limit: int | None = None,
    resume: str | Path | None = None,
    real: Sequence[str | Path] = (),
    real_weight: float = 1.0,
    dice: bool = False,
    photometric: str = "mild",
    edge_weight: float = 0.0,
    device: str = "cpu",
    workers: int = 0,
    minutes: float | None = None,
    log: Any = print,
) -> dict[str, Any]:
    """Train on the train split of ``data`` (one or more `dicecam synth` folders), score on
    their val splits, export ONNX to ``out`` with a ``input_size`` square input.

    ``real`` adds YOLO folders of real photos whose dice all lie on the playing surface (never
    an evaluation split): only the area the dice span is labelled, as surface
    (:func:`~vision.train.surface_data.load_real_surface`), weighted by ``real_weight``. It
    teaches the model real tables and trays without an outline drawn by hand.

    ``dice`` makes a dice-aware model: a fourth input channel maps where the dice lie
    (:func:`~vision.table.geometry.dice_map`; the sidecars' dice in training, the reader's boxes
    at run time), so the model knows where the roll landed.

    ``photometric`` chooses the colour jitter (:data:`~vision.train.surface_data.PHOTOMETRIC`).
    ``edge_weight`` weighs the cells next to an edge of the surface (1 + ``edge_weight`` times;
    :func:`~vision.train.surface_data.edge_cells`), where the dice that left it lie.

    ``device`` trains on a GPU (``"0"``, ``"cuda:1"``); ``workers`` processes make the
    augmented batches beside the net (0: this process; the batches differ from 0's, not
    between other counts). ``minutes`` is a time budget: the one-cycle learning rate follows
    the clock or the steps, whichever is further on, and training stops when either is spent.

    The torch weights are saved beside ``out`` (``.pt``); ``resume`` starts from such a file.
    Returns the figures written into the model card (val mean IoU, epochs trained, the last
    perhaps cut short by the budget, steps, seconds, samples).
    """
    if photometric not in PHOTOMETRIC:
        raise ValueError(f"expected photometric in {PHOTOMETRIC}, got {photometric!r}")
    import torch

    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    if input_size % 16:
        raise ValueError(f"expected an input size that is a multiple of 16, got {input_size}")
    if layers not in (1, LAYERS):
        raise ValueError(f"expected 1 or {LAYERS} layers, got {layers}")
    if not 0.0 <= min_certainty < 1.0:
        raise ValueError(f"expected 0 <= min_certainty < 1, got {min_certainty}")
    if width <= 0:
        raise ValueError(f"expected a width above 0, got {width}")
    if real and layers != 1:
        raise ValueError(
            f"real photos label the playing surface only: expected 1 layer, got {layers}"
        )
    if edge_weight < 0:
        raise ValueError(f"expected an edge_weight of 0 or more, got {edge_weight}")
    if real_weight <= 0:
        raise ValueError(f"expected a real_weight above 0, got {real_weight}")
    if minutes is not None and minutes <= 0:
        raise ValueError(f"expected a time budget above 0 minutes, got {minutes}")
    device = torch_device(device)
    Path(out).parent.mkdir(parents=True, exist_ok=True)  # before training, not after it
    folders = [data] if isinstance(data, str | Path) else list(data)
    cache = round(input_size * CACHE_RATIO)
    unreadable: list[Path] = []
    try:  # a folder with no photo left to read is refused: its photos are said first
        parts = [
            load_surface_split(f, "train", cache, limit, dice=dice, unreadable=unreadable)
            for f in folders
        ]
        synthetic = sum(len(im) for im, _ in parts)
        parts += [
            load_real_surface(f, cache, limit, dice=dice, unreadable=unreadable) for f in real
        ]
        val_parts = [
            load_surface_split(f, "val", cache, dice=dice, unreadable=unreadable) for f in folders
        ]
    finally:
        say_unreadable(unreadable, "outline model", log)  # left out of its training
    images = np.concatenate([im for im, _ in parts])
    masks = np.concatenate([m for _, m in parts])
    weight = np.where(np.arange(len(images)) < synthetic, 1.0, real_weight).astype(np.float32)
    val_images = np.concatenate([im for im, _ in val_parts])
    val_masks = np.concatenate([m for _, m in val_parts])
    log(
        f"loaded {len(images)} train ({len(images) - synthetic} real) / {len(val_images)} val "
        f"samples in {time.perf_counter() - t0:.0f}s"
    )
    vx, vy = plain_batch(val_images, val_masks, input_size)
    channels = 4 if dice else 3  # the photo, and the dice map
    net = build_net(layers, width, channels)
    if resume is not None:
        net.load_state_dict(torch.load(str(resume), map_location="cpu"))
    # the workers fork before the net goes to a GPU: a forked CUDA context is unusable
    maker = BatchMaker(
        images, masks, input_size, layers, photometric, workers, make=augmented_batch
    )
    net.to(device)
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    steps = epochs * math.ceil(len(images) / batch)
    sched = None
    if minutes is None:
        sched = torch.optim.lr_scheduler.OneCycleLR(
            opt, max_lr=lr, total_steps=steps, pct_start=0.15
        )
    t_train = time.perf_counter()
    step, epoch, done = 0, 0, False
    with maker:
        while epoch < epochs and not done:
            epoch += 1
            net.train()
            order = rng.permutation(len(images))
            total, seen = 0.0, 0
            for idx, (x, y, known) in maker.epoch(rng, order, batch):
                if sched is None:  # the time budget's schedule
                    spent = (time.perf_counter() - t_train) / (60 * minutes)
                    progress = max(spent, step / steps)  # the clock or the steps
                    if progress >= 1.0:
                        done = True
                        break
                    rate, beta = one_cycle(progress, lr)
                    for group in opt.param_groups:
                        group["lr"], group["betas"] = rate, (beta, group["betas"][1])
                known *= weight[idx, None, None]
                if edge_weight:
                    known *= 1.0 + edge_weight * edge_cells(y)
                logits = net(torch.from_numpy(x).to(device))
                loss = surface_loss(
                    logits, torch.from_numpy(y).to(device), torch.from_numpy(known).to(device)
                )
                opt.zero_grad()
                loss.backward()
                opt.step()
                if sched is not None:
                    sched.step()
                step += 1
                seen += len(idx)
                total += float(loss.detach()) * len(idx)
            if done and not seen:  # the budget ran out before this epoch's first step
                epoch -= 1
                break
            log(f"epoch {epoch} done ({time.perf_counter() - t_train:.0f}s)")
            if epoch % 5 == 0 or epoch == epochs or done:
                iou = _evaluate(net, vx, vy, device)
                log(
                    f"epoch {epoch}/{epochs} loss {total / max(seen, 1):.4f} val mIoU "
                    f"{iou:.4f} ({time.perf_counter() - t_train:.0f}s)"
                )
    iou = _evaluate(net, vx, vy, device)
    net.to("cpu")
    figures = {
        "val_mean_iou": round(iou, 4),
        "epochs": epoch,
        "steps": step,
        "train_samples": len(images),
        "real_samples": len(images) - synthetic,
        "real_weight": real_weight,
        "val_samples": len(val_images),
        "train_seconds": round(time.perf_counter() - t_train),
        "input": input_size,
        "stride": STRIDE,
        "layers": layers,
        "width": width,
        "min_certainty": min_certainty,
        "params": sum(p.numel() for p in net.parameters()),
        "dice": int(dice),
        "photometric": photometric,
        "edge_weight": edge_weight,
    }
    with replacing(Path(out).with_suffix(".pt")) as part:
        torch.save(net.state_dict(), str(part))
    data_names = ", ".join(map(str, [*folders, *real]))
    export_surface(
        net, out, figures | {"data": data_names}, input_size=input_size, channels=channels
    )
    return figures


def _evaluate(net: Any, x: np.ndarray, y: np.ndarray, device: str = "cpu") -> float:
    import torch

    net.eval()
    with torch.no_grad():
        probs = np.concatenate(
            [
                probabilities(net(torch.from_numpy(x[k : k + 256]).to(device))).cpu().numpy()
                for k in range(0, len(x), 256)
            ]
        )
    return float(np.mean([_iou(p, t) for p, t in zip(probs, y, strict=True)]))


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Train the dicecam playing-surface outline model.")
    p.add_argument(
        "data", nargs="+", help="`dicecam synth` folders (images/, meta/ with train and val)"
    )
    p.add_argument("--input", type=int, default=INPUT, help="square input side (default 128)")
    p.add_argument(
        "--layers",
        type=int,
        choices=(1, LAYERS),
        default=1,
        help="1: the playing surface (shipped); 3: off, table and tray layers",
    )
    p.add_argument(
        "--width",
        type=float,
        default=1.0,
        help="channel multiplier (default 1.0; the shipped model: 1.5)",
    )
    p.add_argument(
        "--min-certainty",
        type=float,
        default=0.0,
        help="written into the model: below this grid certainty the runtime gives no outline",
    )
    p.add_argument("--out", default="models/dicecam-surface.onnx")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--limit", type=int, default=None, help="use at most this many train samples")
    p.add_argument("--resume", default=None, help="start from these torch weights (.pt)")
    p.add_argument(
        "--real",
        nargs="+",
        default=[],
        metavar="DIR",
        help="YOLO folders of real photos whose dice all lie on the surface (train splits only): "
        "the area the dice span is labelled surface, the rest left out of the loss",
    )
    p.add_argument(
        "--real-weight", type=float, default=1.0, help="weight of the real photos' cells"
    )
    p.add_argument(
        "--dice",
        action="store_true",
        help="dice-aware: a fourth input channel maps where the dice lie (the reader's boxes)",
    )
    p.add_argument(
        "--photometric",
        choices=PHOTOMETRIC,
        default="mild",
        help="colour jitter: mild (default), strong (dim, washed-out, grey, blurred photos) or "
        "mixed (each photo one of the two)",
    )
    p.add_argument(
        "--edge-weight",
        type=float,
        default=0.0,
        help="weigh the cells next to a surface edge 1 + this many times (default 0)",
    )
    p.add_argument("--device", default="cpu", help="cpu (default), or a GPU: 0, cuda, cuda:1")
    p.add_argument(
        "--workers",
        type=int,
        default=0,
        help="processes that make the augmented batches (default 0: this one)",
    )
    p.add_argument(
        "--minutes",
        type=float,
        default=None,
        help="time budget: stop after this many minutes (or --epochs, whichever comes first), "
        "the learning rate's cycle following the clock",
    )
    a = p.parse_args(argv)
    figures = train_surface(
        a.data,
        a.out,
        input_size=a.input,
        layers=a.layers,
        width=a.width,
        min_certainty=a.min_certainty,
        epochs=a.epochs,
        batch=a.batch,
        lr=a.lr,
        seed=a.seed,
        threads=a.threads,
        limit=a.limit,
        resume=a.resume,
        real=a.real,
        real_weight=a.real_weight,
        dice=a.dice,
        photometric=a.photometric,
        edge_weight=a.edge_weight,
        device=a.device,
        workers=a.workers,
        minutes=a.minutes,
    )
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
