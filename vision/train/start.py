"""The model ``dicecam train --from`` starts from: where its files are, and whether fine-tuning
can start from them, said before any photo is read."""

from __future__ import annotations

import os
from pathlib import Path

from vision.config import MODELS_DIR

__all__ = ["check_starting_model", "starting_model"]


def starting_model(from_model: str | os.PathLike[str]) -> tuple[Path, Path]:
    """The exported model and the detector checkpoint that ``--from`` names (``models/x`` or
    ``models/x.onnx``: ``x.onnx`` and ``x.pt``).

    Raises:
        FileNotFoundError: either file is missing.
    """
    base = Path(from_model)
    if base.is_dir():
        found = sorted(f.name for f in base.glob("*.onnx") if f.with_suffix(".pt").is_file())
        inside = f" (it holds {', '.join(found)})" if found else ", with no NAME.onnx and NAME.pt"
        raise FileNotFoundError(f"--from needs a model, NAME.onnx, got the folder {base}{inside}")
    if base.suffix != ".onnx":
        base = base.with_suffix(".onnx")
    for p in (base, base.with_suffix(".pt")):
        if not p.is_file():
            why = "the exported model and its checkpoint"
            if p.suffix == ".pt" and p.parent.resolve() == MODELS_DIR.resolve():
                why += "; an installed dicecam ships no .pt weights: fine-tune from a clone"
            raise FileNotFoundError(f"--from needs {p} ({why})")
    return base, base.with_suffix(".pt")


def check_starting_model(base: Path) -> None:
    """Refuse, before any photo is read, a ``--from`` model that fine-tuning cannot start from:
    an export the reader cannot load (cut, or another kind of model such as the off-table one),
    a detector checkpoint ``NAME.pt`` that is cut, of another kind (a classifier's weights) or
    of another detector, a face classifier ``NAME-faces.pt`` that cannot be loaded.

    Raises:
        ModelError: saying which file and what it is instead.
    """
    import torch
    from ultralytics.nn.tasks import DetectionModel

    from vision.reader import DiceReader, ModelError

    from .classifier import load_classifier

    try:
        reader = DiceReader(base, warmup=False, backend="onnxruntime")
    except ModelError as exc:
        raise ModelError(f"--from {base}: expected a dice reader to fine-tune: {exc}") from None
    pt = base.with_suffix(".pt")
    try:
        saved = torch.load(pt, map_location="cpu", weights_only=False)
    except Exception as exc:  # pickle, zip and torch errors alike
        why = " ".join(str(exc).split())
        raise ModelError(
            f"--from {base}: cannot load its detector checkpoint {pt} (truncated or corrupt?): "
            f"{why}"
        ) from None
    found = saved if isinstance(saved, dict) else {}
    detector = found.get("ema") or found.get("model")
    if not isinstance(detector, DetectionModel):
        what = f"keys {', '.join(map(str, found))}" if found else type(saved).__name__
        raise ModelError(
            f"--from {base}: expected {pt.name} to be a YOLO detector checkpoint (ultralytics), "
            f"got {what}: the weights of another kind of model"
        )
    if len(detector.names) != reader.num_classes:
        raise ModelError(
            f"--from {base}: expected the checkpoint of this export, got {pt.name} of a "
            f"detector of {len(detector.names)} classes ({base.name}: {reader.num_classes})"
        )
    faces = base.with_name(f"{base.stem}-faces.pt")
    if faces.is_file():
        try:
            load_classifier(faces)
        except Exception as exc:
            why = " ".join(str(exc).split())
            raise ModelError(
                f"--from {base}: cannot load its face classifier's weights {faces} "
                f"(truncated, corrupt or another kind of model?): {why}"
            ) from None
