"""Training the cocked-die model (``models/dicecam-reader-cocked.onnx``, see :mod:`vision.cocked`).

Its examples are the labelled dice of `dicecam synth` folders, each cut out with some of its
surroundings (``--context`` times its size): dice whose sidecar state is ``cocked`` (tilted more
than 12 degrees, leaning on another die or a wall) are positives; every other die at rest or
rolling on the table, on or off it, is a negative; dice in the air are left out.

Example:
    python -m vision.train.cocked runs/surf/synth-s11 runs/train/synth-1-1600 \\
        --out models/dicecam-reader-cocked.onnx
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vision.cocked import COCKED_CONTEXT, COCKED_THRESHOLD, COCKED_THRESHOLD_ALONE

from .offtable import (
    add_run_options,
    fit_context_model,
    save_context_model,
    share_at,
    synth_parser,
    train_main,
    val_probabilities,
)

__all__ = ["train_cocked"]


def train_cocked(
    data: Sequence[str | Path],
    out: str | Path,
    *,
    epochs: int = 10,
    batch: int = 128,
    lr: float = 3e-3,
    context: float = COCKED_CONTEXT,
    size: int = 48,
    threshold: float = COCKED_THRESHOLD,
    threshold_alone: float = COCKED_THRESHOLD_ALONE,
    threads: int | None = None,
    limit: int | None = None,
    seed: int = 0,
    log: Any = print,
) -> dict[str, Any]:
    """Train on the train splits of ``data``, score on their val splits, export ONNX to ``out``
    (torch weights beside it, ``.pt``) with ``context``, the thresholds (``threshold`` on the mean
    with the face classifier's P(cocked), ``threshold_alone`` on this model's) and mirror-image
    averaging in its metadata. Returns the figures for the model card.

    Raises:
        ValueError: the folders hold no cocked die or no flat one.
    """
    model, figures, (vx, vy) = fit_context_model(
        data,
        positive="cocked",
        both="cocked and flat",
        context=context,
        size=size,
        epochs=epochs,
        batch=batch,
        lr=lr,
        seed=seed,
        threads=threads,
        limit=limit,
        log=log,
    )
    figures |= {"threshold": threshold, "threshold_alone": threshold_alone}
    if len(vx):
        figures |= _val_figures(model, vx, vy, threshold_alone)
    meta = figures | {"task": "dicecam-cocked", "tta": True, "data": ", ".join(map(str, data))}
    save_context_model(model, out, size, meta)
    return figures


def _val_figures(model: Any, x: np.ndarray, y: np.ndarray, threshold: float) -> dict[str, Any]:
    """Cocked recall and flat dice called cocked on the val crops by this model alone (mirror
    average), at ``threshold``."""
    p = val_probabilities(model, x, tta=True)
    return {
        "val_cocked_recall": share_at(p[y == 1], threshold),
        "val_flat_called_cocked": share_at(p[y == 0], threshold),
    }


def main(argv: Sequence[str] | None = None) -> int:
    p = synth_parser("Train the dicecam cocked-die model.")
    p.add_argument("--out", default="models/dicecam-reader-cocked.onnx")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--context", type=float, default=COCKED_CONTEXT)
    p.add_argument("--size", type=int, default=48, help="crop side in pixels")
    p.add_argument("--threshold", type=float, default=COCKED_THRESHOLD)
    p.add_argument("--threshold-alone", type=float, default=COCKED_THRESHOLD_ALONE)
    add_run_options(p)
    return train_main(p, train_cocked, argv)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
