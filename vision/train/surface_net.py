"""The outline model's network, loss and ONNX export (trained by :mod:`vision.train.surface`).

Example (not run: a torch export to a file in the working folder):
    >>> net = SurfaceNet(layers=1, width=1.5)  # doctest: +SKIP
    >>> export_surface(net, "surface.onnx", {"min_certainty": 0.4})  # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vision.atomic import replacing
from vision.train.surface_data import INPUT, STRIDE

__all__ = ["SurfaceNet", "build_net", "export_surface", "probabilities", "surface_loss"]


def build_net(layers: int = 1, width: float = 1.0, channels: int = 3) -> Any:
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


SurfaceNet = build_net  # the factory; torch loads only when called


def _soft_dice(p: Any, t: Any) -> Any:
    inter = (p * t).sum(dim=(1, 2))
    return 1 - (2 * inter + 1) / (p.sum(dim=(1, 2)) + t.sum(dim=(1, 2)) + 1)


def surface_loss(logits: Any, target: Any, known: Any | None = None) -> Any:
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


def probabilities(logits: Any) -> Any:
    """Sigmoid of a one-layer output, softmax over the layers of a three-layer one."""
    import torch

    return torch.sigmoid(logits) if logits.shape[1] == 1 else torch.softmax(logits, 1)


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
    layers off, table, tray (L = 3); ``metadata`` goes into the custom metadata map. The net
    comes back in the mode it was given in (the export itself runs in eval mode)."""
    import torch

    class WithProbabilities(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return probabilities(self.inner(x))

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    # torch.onnx puts the module it exports back in that module's mode: a fresh wrapper's is
    # training, which would turn the caller's net to training (batch statistics, dropout)
    modes = {m: m.training for m in net.modules()}
    wrapper = WithProbabilities(net).eval()
    try:
        _export(wrapper, out, metadata, input_size=input_size, channels=channels)
    finally:  # the net is handed back in the mode it came in, module by module
        for module, training in modes.items():
            module.training = training
    return out


def _export(
    wrapper: Any, out: Path, metadata: dict[str, Any] | None, *, input_size: int, channels: int
) -> None:
    """Write ``wrapper`` (in eval mode) to ``out`` with the outline model's metadata."""
    import onnx
    import torch

    with replacing(out) as part:  # exported, then given its metadata, then put in place
        torch.onnx.export(
            wrapper,
            torch.zeros(1, channels, input_size, input_size),
            str(part),
            input_names=["image"],
            output_names=["surface"],
            dynamic_axes={"image": {0: "batch"}, "surface": {0: "batch"}},
            opset_version=17,
            dynamo=False,
        )
        model = onnx.load(str(part))
        meta = {
            "task": "dicecam-surface",
            "imgsz": str(input_size),
            "stride": str(STRIDE),
        }
        meta |= {k: str(v) for k, v in (metadata or {}).items()}
        for key, value in meta.items():
            entry = model.metadata_props.add()
            entry.key, entry.value = key, value
        onnx.save(model, str(part))
