"""The face classifier: reads the top value of one die from a crop (second stage of the reader).

The detector finds dice at a small input size; this network reads each die from the full
resolution photo, at a scale where its pips are clear. Classes 0..5 are faces 1..6, class 6 is a
cocked die. Trained with plain torch, exported to ONNX (input ``images``: N x 3 x 48 x 48 float
RGB in 0..1; output ``logits``: N x 7).

Several networks can be joined into one (:func:`join_classifiers`): the joined model's output is
the log of the mean of their probabilities, so the runtime's softmax gives that mean and reads
it like any single network's; it saves, loads, fine-tunes and exports as one model.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from vision.atomic import replacing

__all__ = [
    "FaceNet",
    "export_classifier",
    "join_classifiers",
    "load_classifier",
    "save_classifier",
    "train_classifier",
]

N_CLASSES = 7


def _build_model(width: float = 1.0, n_classes: int = N_CLASSES):
    """The network; ``width`` scales every layer's channels (1.0: 16-32-64-96). The off-table
    die model uses it too, with 2 classes."""
    import torch.nn as nn

    c1, c2, c3, c4 = (max(8, round(c * width / 8) * 8) for c in (16, 32, 64, 96))

    def block(cin: int, cout: int) -> nn.Sequential:
        return nn.Sequential(
            nn.Conv2d(cin, cout, 3, padding=1, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True),
            nn.Conv2d(cout, cout, 3, padding=1, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
        )

    model = nn.Sequential(
        nn.Conv2d(3, c1, 3, padding=1, bias=False),
        nn.BatchNorm2d(c1),
        nn.ReLU(inplace=True),
        nn.MaxPool2d(2),  # 24
        block(c1, c2),  # 12
        block(c2, c3),  # 6
        block(c3, c4),  # 3
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Dropout(0.2),
        nn.Linear(c4, n_classes),
    )
    model.width = width
    model.n_classes = n_classes
    return model


FaceNet = _build_model


def join_classifiers(models: list[Any]) -> Any:
    """One model whose output is the log of the mean of ``models``' probabilities (joined
    models are taken apart first, so the members stay flat).

    Example:
        >>> join_classifiers([FaceNet(0.5), FaceNet(0.5)]).n_members
        2
    """
    import torch
    import torch.nn as nn

    members = [m for model in models for m in getattr(model, "members", [model])]
    if not members:
        raise ValueError("expected at least one classifier to join, got none")
    if len({m.n_classes for m in members}) != 1:
        raise ValueError(
            f"expected classifiers with the same classes, got {[m.n_classes for m in members]}"
        )

    class Joined(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.members = nn.ModuleList(members)
            self.n_classes = members[0].n_classes
            self.n_members = len(members)

        def forward(self, x):
            probs = torch.stack([torch.softmax(m(x), 1) for m in self.members]).mean(0)
            return torch.log(probs.clamp_min(1e-8))

    return Joined()


def _saved(model) -> dict[str, Any]:
    return {
        "width": getattr(model, "width", 1.0),
        "n_classes": getattr(model, "n_classes", N_CLASSES),
        "state_dict": model.state_dict(),
    }


def save_classifier(model, path: Path) -> Path:
    """Save weights with the width they need (``load_classifier`` rebuilds the network); a
    joined model saves each member."""
    import torch

    members = getattr(model, "members", None)
    saved = {"members": [_saved(m) for m in members]} if members is not None else _saved(model)
    with replacing(path) as part, open(part, "wb") as f:  # torch raises over its OSError
        torch.save(saved, f)
    return Path(path)


def _rebuild(saved: dict[str, Any]):
    if "state_dict" not in saved:  # a plain state dict of width 1.0
        model = FaceNet(1.0, N_CLASSES)
        model.load_state_dict(saved)
        return model
    model = FaceNet(saved["width"], saved.get("n_classes", N_CLASSES))
    model.load_state_dict(saved["state_dict"])
    return model


def load_classifier(path: Path):
    """The network saved at ``path`` (also reads plain state dicts of width 1.0, and joined
    models: see :func:`join_classifiers`)."""
    import torch

    saved = torch.load(path, map_location="cpu")
    if "members" in saved:
        return join_classifiers([_rebuild(m) for m in saved["members"]])
    return _rebuild(saved)


BLUR_SIGMA = (0.5, 2.0)
"""Range of the Gaussian blur (crop pixels) of :func:`blur_crops`."""


def blur_crops(batch, share: float, generator):
    """``batch`` (N x C x H x W float) with about ``share`` of its crops blurred, each by a
    Gaussian of its own sigma drawn from :data:`BLUR_SIGMA`: a soft or shaken camera.

    Example:
        >>> import torch
        >>> x = torch.zeros(2, 3, 8, 8); x[:, :, 4, 4] = 1
        >>> y = blur_crops(x, 1.0, torch.Generator().manual_seed(0))
        >>> bool(y[:, :, 4, 4].max() < 1) and abs(float(y.sum()) - 6) < 1e-4
        True
    """
    import torch
    import torch.nn.functional as F

    if share <= 0:
        return batch
    n, c = batch.shape[:2]
    pick = torch.rand(n, generator=generator) < share
    if not bool(pick.any()):
        return batch
    lo, hi = BLUR_SIGMA
    sigma = lo + (hi - lo) * torch.rand(n, generator=generator)
    radius = int(2 * hi + 0.5)
    taps = torch.arange(-radius, radius + 1, dtype=batch.dtype)
    kernel = torch.exp(-(taps[None] ** 2) / (2 * sigma[:, None] ** 2))
    kernel = kernel / kernel.sum(1, keepdim=True)
    kernel[~pick] = (taps == 0).to(batch.dtype)  # the others pass through unchanged
    k = kernel.repeat_interleave(c, 0)[:, None]  # (N*C, 1, taps)
    x = batch.reshape(1, n * c, *batch.shape[2:])
    x = F.conv2d(F.pad(x, (radius, radius, 0, 0), mode="replicate"), k[:, :, None, :], groups=n * c)
    x = F.conv2d(F.pad(x, (0, 0, radius, radius), mode="replicate"), k[:, :, :, None], groups=n * c)
    return x.reshape(batch.shape)


def _augment(batch, generator, blur: float = 0.0):
    """Mirror, small tilts, colour and contrast changes, inversion, noise; with ``blur``, that
    share of the crops blurred (:func:`blur_crops`).

    No quarter turns: in an oblique photo the top face is the one seen from above, at the top of
    the crop, and a turned crop would show a side face in its place (10 epochs on real train
    crops, read on the real eval set's true boxes: 84.1% without quarter turns, 82.5% with).
    """
    import torch
    import torch.nn.functional as F

    x = batch
    if torch.rand(1, generator=generator) < 0.5:
        x = torch.flip(x, dims=(3,))
    # a tilt of up to 15 degrees and a zoom of +-10%, one per sample
    angle = (torch.rand(x.shape[0], generator=generator) * 2 - 1) * (torch.pi / 12)
    zoom = 1 + 0.1 * (torch.rand(x.shape[0], generator=generator) * 2 - 1)
    cos, sin = torch.cos(angle) * zoom, torch.sin(angle) * zoom
    theta = torch.stack(
        [torch.stack([cos, -sin, 0 * cos], 1), torch.stack([sin, cos, 0 * cos], 1)], 1
    )
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    x = F.grid_sample(x, grid, mode="bilinear", padding_mode="border", align_corners=False)
    if blur > 0:
        x = blur_crops(x, blur, generator)
    n = x.shape[0]
    # per-sample brightness/contrast/channel gains
    gain = 1 + 0.25 * (torch.rand(n, 3, 1, 1, generator=generator) * 2 - 1)
    bias = 0.15 * (torch.rand(n, 1, 1, 1, generator=generator) * 2 - 1)
    mean = x.mean(dim=(1, 2, 3), keepdim=True)
    contrast = 1 + 0.4 * (torch.rand(n, 1, 1, 1, generator=generator) * 2 - 1)
    x = (x - mean) * contrast + mean
    x = x * gain + bias
    # some samples to grayscale, some inverted (light pips on dark dice and the reverse)
    gray = (torch.rand(n, 1, 1, 1, generator=generator) < 0.15).float()
    x = gray * x.mean(dim=1, keepdim=True).expand_as(x) + (1 - gray) * x
    inv = (torch.rand(n, 1, 1, 1, generator=generator) < 0.1).float()
    x = inv * (1 - x) + (1 - inv) * x
    x = x + 0.03 * torch.randn(x.shape, generator=generator) * torch.rand(
        n, 1, 1, 1, generator=generator
    )
    return x.clamp(0, 1)


def _to_tensor(crops: np.ndarray):
    import torch

    # BGR uint8 NHWC -> RGB float NCHW
    return torch.from_numpy(crops[..., ::-1].copy()).permute(0, 3, 1, 2).float().div_(255.0)


def train_classifier(
    crops: np.ndarray,
    classes: np.ndarray,
    *,
    epochs: int = 12,
    batch: int = 128,
    lr: float = 3e-3,
    seed: int = 0,
    init: Path | None = None,
    val: tuple[np.ndarray, np.ndarray] | None = None,
    threads: int | None = None,
    width: float = 1.0,
    n_classes: int = N_CLASSES,
    tune_last: bool = False,
    blur: float = 0.0,
    device: str = "cpu",
    log=print,
):
    """Train the face classifier on crops (N x S x S x 3 BGR uint8) and return the model.

    ``device``: ``"cpu"`` or a CUDA GPU by its number (``"0"``). The crops, their shuffling and
    their augmentation stay on the CPU (the same random draws either way); each batch is
    trained on the device, and the model comes back on the CPU, ready to export.

    ``blur``: share of the crops blurred in each epoch (:func:`blur_crops`; 0: none, and the
    random draws are those of a model trained before the option came).

    ``tune_last``: of a joined model (``init``, see :func:`join_classifiers`), train the last
    member only and keep the others as they are (weights and batch-norm statistics).
    """
    import torch
    import torch.nn as nn

    if threads:
        torch.set_num_threads(threads)
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    model = load_classifier(init) if init is not None else FaceNet(width, n_classes)
    n_classes = model.n_classes
    dev = _torch_device(device)
    model.to(dev)
    x_all = _to_tensor(crops)
    y_all = torch.from_numpy(np.asarray(classes, np.int64))
    counts = torch.bincount(y_all, minlength=n_classes).float()
    weights = torch.where(counts > 0, (counts.sum() / counts.clamp(min=1)) ** 0.5, 0.0)
    loss_fn = nn.CrossEntropyLoss(weight=weights / weights[counts > 0].mean(), label_smoothing=0.05)
    loss_fn.to(dev)
    members = getattr(model, "members", None)
    frozen = list(members[:-1]) if tune_last and members is not None else []
    for member in frozen:
        member.requires_grad_(False)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=1e-4)
    steps = epochs * ((len(x_all) + batch - 1) // batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=max(steps, 1))
    for epoch in range(epochs):
        model.train()
        for member in frozen:
            member.eval()
        start = time.perf_counter()
        perm = torch.randperm(len(x_all), generator=generator)
        total, correct, loss_sum = 0, 0, 0.0
        for i in range(0, len(perm), batch):
            idx = perm[i : i + batch]
            xb = _augment(x_all[idx], generator, blur).to(dev)
            yb = y_all[idx].to(dev)
            logits = model(xb)
            loss = loss_fn(logits, yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            loss_sum += float(loss.detach()) * len(idx)
            correct += int((logits.argmax(1) == yb).sum())
            total += len(idx)
        msg = f"epoch {epoch + 1}/{epochs} loss {loss_sum / total:.4f} train acc {correct / total:.4f}"
        if val is not None and len(val[0]):
            msg += f" val acc {evaluate_classifier(model, *val):.4f}"
        log(f"{msg} ({time.perf_counter() - start:.0f} s)")
    model.eval()
    for member in frozen:
        member.requires_grad_(True)
    return model.to("cpu")


def _torch_device(device: str):
    """The torch device of a ``--device`` value: ``"cpu"``, or a CUDA GPU's number (``"0"``)."""
    import torch

    return torch.device(f"cuda:{device}" if device.isascii() and device.isdecimal() else device)


def evaluate_classifier(model, crops: np.ndarray, classes: np.ndarray) -> float:
    import torch

    model.eval()
    dev = next(model.parameters()).device
    with torch.no_grad():
        preds = torch.cat(
            [
                model(_to_tensor(crops[i : i + 512]).to(dev)).argmax(1).cpu()
                for i in range(0, len(crops), 512)
            ]
        )
    return float((preds.numpy() == np.asarray(classes)).mean())


def export_classifier(model, out_file: Path, size: int = 48) -> Path:
    """Write the classifier as ONNX with a dynamic batch axis."""
    import torch

    model.eval()
    out_file = Path(out_file)
    out_file.parent.mkdir(parents=True, exist_ok=True)
    dummy = torch.zeros(1, 3, size, size)
    with replacing(out_file) as part:
        torch.onnx.export(
            model,
            dummy,
            str(part),
            input_names=["images"],
            output_names=["logits"],
            dynamic_axes={"images": {0: "n"}, "logits": {0: "n"}},
            opset_version=17,
            dynamo=False,
        )
    return out_file
