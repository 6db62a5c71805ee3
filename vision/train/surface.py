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

from vision.table.surface import LAYERS, play_surface
from vision.train.surface_data import (
    CACHE_RATIO,
    INPUT,
    STRIDE,
    augmented_batch,
    load_real_surface,
    load_surface_split,
    plain_batch,
    region_codes,
)

__all__ = ["SurfaceNet", "export_surface", "load_surface_split", "region_codes", "train_surface"]


def _net(layers: int = 1, width: float = 1.0, channels: int = 3) -> Any:
    """The network; ``width`` scales every layer's channels (1.0: 16-24-40-64; shipped: 1.5);
    ``channels`` 4 reads the dice map beside the photo."""
    import torch
    from torch import nn

    def block(cin: int, cout: int, stride: int = 1, dilation: int = 1) -> nn.Sequential:
        return nn.Sequential(
            nn.Conv2d(cin, cout, 3, stride, padding=dilation, dilation=dilation, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True),
        )

    class SurfaceNet(nn.Module):
        """Encoder to 1/16 with global context, decoder back to 1/4; logits of the layers."""

        def __init__(self) -> None:
            super().__init__()
            c1, c2, c3, c4, c5 = (max(8, round(c * width / 8) * 8) for c in (16, 24, 40, 64, 32))
            self.e1 = block(channels, c1, 2)  # 1/2
            self.e2 = nn.Sequential(block(c1, c2, 2), block(c2, c2))  # 1/4
            self.e3 = nn.Sequential(block(c2, c3, 2), block(c3, c3))  # 1/8
            self.e4 = nn.Sequential(block(c3, c4, 2), block(c4, c4, dilation=2))  # 1/16
            self.ctx = nn.Sequential(nn.Linear(c4, c4), nn.ReLU(inplace=True))
            self.d3 = block(c4 + c3, c5)
            self.d2 = block(c5 + c2, c2)
            self.head = nn.Conv2d(c2, layers, 1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            f2 = self.e2(self.e1(x))
            f3 = self.e3(f2)
            f4 = self.e4(f3)
            g = self.ctx(f4.mean(dim=(2, 3)))[:, :, None, None]
            f4 = f4 + g
            up = nn.functional.interpolate(f4, scale_factor=2.0, mode="nearest")
            d3 = self.d3(torch.cat([up, f3], 1))
            up = nn.functional.interpolate(d3, scale_factor=2.0, mode="nearest")
            return self.head(self.d2(torch.cat([up, f2], 1)))

    return SurfaceNet()


SurfaceNet = _net  # the factory; torch loads only when called


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

    The torch weights are saved beside ``out`` (``.pt``); ``resume`` starts from such a file.
    Returns the figures written into the model card (val mean IoU, epochs, seconds, samples).
    """
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
    if real_weight <= 0:
        raise ValueError(f"expected a real_weight above 0, got {real_weight}")
    Path(out).parent.mkdir(parents=True, exist_ok=True)  # before training, not after it
    folders = [data] if isinstance(data, str | Path) else list(data)
    cache = round(input_size * CACHE_RATIO)
    parts = [load_surface_split(f, "train", cache, limit, dice=dice) for f in folders]
    synthetic = sum(len(im) for im, _ in parts)
    parts += [load_real_surface(f, cache, limit, dice=dice) for f in real]
    images = np.concatenate([im for im, _ in parts])
    masks = np.concatenate([m for _, m in parts])
    weight = np.where(np.arange(len(images)) < synthetic, 1.0, real_weight).astype(np.float32)
    parts = [load_surface_split(f, "val", cache, dice=dice) for f in folders]
    val_images = np.concatenate([im for im, _ in parts])
    val_masks = np.concatenate([m for _, m in parts])
    log(
        f"loaded {len(images)} train ({len(images) - synthetic} real) / {len(val_images)} val "
        f"samples in {time.perf_counter() - t0:.0f}s"
    )
    vx, vy = plain_batch(val_images, val_masks, input_size)
    channels = 4 if dice else 3  # the photo, and the dice map
    net = _net(layers, width, channels)
    if resume is not None:
        net.load_state_dict(torch.load(str(resume), map_location="cpu"))
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=1e-4)
    steps = epochs * math.ceil(len(images) / batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.15)
    t_train = time.perf_counter()
    for epoch in range(1, epochs + 1):
        net.train()
        order = rng.permutation(len(images))
        total = 0.0
        for k in range(0, len(order), batch):
            idx = order[k : k + batch]
            x, y, known = augmented_batch(rng, images[idx], masks[idx], input_size, layers)
            known *= weight[idx, None, None]
            logits = net(torch.from_numpy(x))
            loss = _loss(logits, torch.from_numpy(y), torch.from_numpy(known))
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(idx)
        log(f"epoch {epoch} done ({time.perf_counter() - t_train:.0f}s)")
        if epoch % 5 == 0 or epoch == epochs:
            iou = _evaluate(net, vx, vy)
            log(
                f"epoch {epoch}/{epochs} loss {total / len(order):.4f} val mIoU {iou:.4f} "
                f"({time.perf_counter() - t_train:.0f}s)"
            )
    iou = _evaluate(net, vx, vy)
    figures = {
        "val_mean_iou": round(iou, 4),
        "epochs": epochs,
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
    }
    torch.save(net.state_dict(), str(Path(out).with_suffix(".pt")))
    data_names = ", ".join(map(str, [*folders, *real]))
    export_surface(
        net, out, figures | {"data": data_names}, input_size=input_size, channels=channels
    )
    return figures


def _soft_dice(p: Any, t: Any) -> Any:
    inter = (p * t).sum(dim=(1, 2))
    return 1 - (2 * inter + 1) / (p.sum(dim=(1, 2)) + t.sum(dim=(1, 2)) + 1)


def _loss(logits: Any, target: Any, known: Any | None = None) -> Any:
    """One layer: binary cross-entropy, each cell weighed by ``known`` (N, h, w: its known
    share times the photo's weight; default all 1), plus soft Dice on the surface of the fully
    known photos. Three layers: cross-entropy with the layer shares, plus soft Dice on the
    surface (table or tray) and on the tray layer of photos that show one."""
    import torch

    if logits.shape[1] == 1:
        if known is None:
            known = torch.ones_like(target[:, 0])
        bce = torch.nn.functional.binary_cross_entropy_with_logits(
            logits[:, 0], target[:, 0], reduction="none"
        )
        bce = (bce * known).sum() / known.sum().clamp_min(1e-6)
        full = known.flatten(1).amin(1) >= 0.999
        if not full.any():
            return bce
        dice = _soft_dice(torch.sigmoid(logits[full, 0]), target[full, 0]).mean()
        return bce + 0.5 * dice
    logp = torch.log_softmax(logits, 1)
    ce = -(target * logp).sum(1).mean()
    prob = logp.exp()
    surface = _soft_dice(prob[:, 1] + prob[:, 2], target[:, 1] + target[:, 2]).mean()
    has_tray = target[:, 2].flatten(1).amax(1) >= 0.5
    tray = _soft_dice(prob[has_tray, 2], target[has_tray, 2]).mean() if has_tray.any() else 0.0
    return ce + 0.5 * surface + 0.5 * tray


def _probabilities(logits: Any) -> Any:
    """Sigmoid of a one-layer output, softmax over the layers of a three-layer one."""
    import torch

    return torch.sigmoid(logits) if logits.shape[1] == 1 else torch.softmax(logits, 1)


def _evaluate(net: Any, x: np.ndarray, y: np.ndarray) -> float:
    import torch

    net.eval()
    with torch.no_grad():
        probs = _probabilities(net(torch.from_numpy(x))).numpy()
    return float(np.mean([_iou(p, t) for p, t in zip(probs, y, strict=True)]))


def export_surface(
    net: Any,
    out: str | Path,
    metadata: dict[str, Any] | None = None,
    *,
    input_size: int = INPUT,
    channels: int = 3,
) -> Path:
    """Export to ONNX: input ``image`` (B, C, S, S) float RGB 0..1 (C = ``channels``: 3, or 4 with
    the dice map) with S = ``input_size``,
    output ``surface`` (B, L, S/4, S/4) probabilities: the playing surface (L = 1) or the
    layers off, table, tray (L = 3); ``metadata`` goes into the custom metadata map."""
    import onnx
    import torch

    class WithProbabilities(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return _probabilities(self.inner(x))

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    net.eval()
    torch.onnx.export(
        WithProbabilities(net),
        torch.zeros(1, channels, input_size, input_size),
        str(out),
        input_names=["image"],
        output_names=["surface"],
        dynamic_axes={"image": {0: "batch"}, "surface": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )
    model = onnx.load(str(out))
    meta = {
        "task": "dicecam-surface",
        "imgsz": str(input_size),
        "stride": str(STRIDE),
    }
    meta |= {k: str(v) for k, v in (metadata or {}).items()}
    for key, value in meta.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.save(model, str(out))
    return out


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
    )
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
