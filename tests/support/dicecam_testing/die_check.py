"""A reader to calibrate the die check of (:func:`vision.train.verify.calibrate_verifier`)."""

from __future__ import annotations

import shutil
from pathlib import Path

from vision.verify import verify_model_for

from . import onnx_models as models

__all__ = ["starting_reader"]

REPO = Path(__file__).resolve().parents[3]


def starting_reader(folder: Path) -> Path:
    """``folder/reader.onnx``, a starting reader: the shipped detector and face classifier, and
    a die check that takes only bright crops for dice (:func:`.onnx_models.bright_is_a_die`), at
    a threshold of 0.5, context 1.5, task ``t``."""
    base = folder / "reader.onnx"
    folder.mkdir(parents=True)
    for suffix in (".onnx", "-faces.onnx"):
        shutil.copy(REPO / "models" / f"dicecam-reader{suffix}", base.with_name(f"reader{suffix}"))
    models.bright_is_a_die(verify_model_for(base), threshold="0.5", context="1.5", task="t")
    return base
