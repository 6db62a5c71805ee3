"""A model soup: one detector whose weights are the mean of several fine-tuned from one start.

Detectors continued from the same checkpoint on different data (stone table tops, low angles,
the real photos once more) each gain somewhere and lose elsewhere. Their weights still lie in
one basin, so their mean reads like an ensemble at the cost of one model (Wortsman et al., 2022,
"Model soups"). A checkpoint listed twice weighs twice.

Example (not run: needs the .pt checkpoints of training runs):
    >>> soup = average_checkpoints(["a.pt", "b.pt", "models/dicecam-reader.pt"])  # doctest: +SKIP
    >>> torch.save(soup, "soup.pt")  # doctest: +SKIP
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vision.atomic import replacing

__all__ = ["average_checkpoints", "soup_detector"]


def average_checkpoints(paths: Sequence[str | Path]) -> dict[str, Any]:
    """The ultralytics checkpoint of ``paths[0]`` with its model's weights replaced by the mean
    of every checkpoint's (floating-point tensors, BatchNorm statistics included; integer
    counters are the first one's). Each tensor is averaged in float32 and stored back in the
    first checkpoint's precision.

    Raises:
        ValueError: fewer than two checkpoints, a file that is not a detector checkpoint, or
            models of different architectures (a tensor missing or of another shape).
    """
    import torch

    if len(paths) < 2:
        raise ValueError(f"a soup needs at least 2 checkpoints, got {len(paths)}")
    ckpts = [_load(path, torch) for path in paths]
    states = [ckpt["model"].state_dict() for ckpt in ckpts]
    first, base = states[0], ckpts[0]
    for path, state in zip(paths[1:], states[1:], strict=True):
        _check_same(first, state, paths[0], path)
    mean = {}
    for key, value in first.items():
        if value.is_floating_point():
            total = sum(s[key].float() for s in states)
            mean[key] = (total / len(states)).to(value.dtype)
        else:
            mean[key] = value
    soup = copy.copy(base)
    soup["model"] = copy.deepcopy(base["model"])
    soup["model"].load_state_dict(mean)
    for stale in ("ema", "optimizer", "updates", "best_fitness"):
        soup[stale] = None
    return soup


def soup_detector(paths: Sequence[str | Path], out: str | Path) -> Path:
    """Average the detector checkpoints ``paths`` (:func:`average_checkpoints`) into ``out``
    (.pt), ready for :func:`vision.train.pipeline.ship_detector`."""
    import torch

    out = Path(out)
    soup = average_checkpoints(paths)
    out.parent.mkdir(parents=True, exist_ok=True)
    with replacing(out) as part:
        torch.save(soup, part)
    listed = ", ".join(f"{p} (x{k})" if k > 1 else p for p, k in Counter(map(str, paths)).items())
    print(f"detector soup of {len(paths)} checkpoints: {listed} -> {out}")
    return out


def _load(path: str | Path, torch: Any) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"expected a detector checkpoint (.pt file), got {path} (no such file)")
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as exc:  # a torch or pickle error: the file is something else
        raise ValueError(
            f"expected a detector checkpoint (.pt), {path} could not be loaded: {exc}"
        ) from None
    model = ckpt.get("model") if isinstance(ckpt, dict) else None
    if model is None or not hasattr(model, "state_dict"):
        raise ValueError(
            f"expected an ultralytics detector checkpoint with a 'model', got {path} "
            f"({type(ckpt).__name__} without one)"
        )
    return ckpt


def _check_same(first: dict[str, Any], other: dict[str, Any], a: str | Path, b: str | Path) -> None:
    """Both state dicts hold the same tensors in the same shapes, else a ValueError naming one."""
    missing = sorted(set(first) ^ set(other))
    if missing:
        raise ValueError(
            f"{b} is not the architecture of {a}: {len(missing)} tensors differ, e.g. {missing[0]}"
        )
    for key, value in first.items():
        if tuple(value.shape) != tuple(other[key].shape):
            raise ValueError(
                f"{b} is not the architecture of {a}: {key} is {tuple(other[key].shape)}, "
                f"expected {tuple(value.shape)}"
            )
