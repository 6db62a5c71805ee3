"""``dicecam train --from`` without training: a starting model of stand-in files, a few labelled
photos of new dice, and the training steps stood in for (the face classifier's step writes its
files, the evaluations measure nothing)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .folders import yolo_folder

__all__ = ["new_dice", "stand_in_shipping", "stand_in_training", "starting_model"]


def starting_model(folder: Path) -> Path:
    """``folder/mine.onnx`` with its checkpoint ``mine.pt`` and face classifier ``mine-faces.pt``
    beside it, each holding ``b"start " + its name``."""
    folder.mkdir(parents=True)
    for name in ("mine.onnx", "mine.pt", "mine-faces.pt"):
        (folder / name).write_bytes(b"start " + name.encode())
    return folder / "mine.onnx"


def new_dice(folder: Path) -> Path:
    """A YOLO folder of 6 photos, one die each, showing the faces 1 to 6."""
    for i in range(6):
        yolo_folder(folder, [f"p{i}"]).joinpath("labels", f"p{i}.txt").write_text(
            f"{i} 0.5 0.5 0.1 0.1\n"
        )
    return folder


def stand_in_training(monkeypatch) -> dict[str, Any]:
    """Training stood in for. In the returned dict, ``"interrupt": True`` makes the face
    classifier's step a Ctrl-C (KeyboardInterrupt); ``"signal": N`` makes it send signal ``N``
    to this process, as ``kill -N`` would."""
    import vision.train.pipeline as pipeline
    import vision.train.run as run
    import vision.train.verify as verify

    calls: dict[str, Any] = {"interrupt": False, "signal": None}

    def train_faces(recipe, dirs, out_onnx, **kw) -> None:
        calls["faces"] = kw  # what the classifier's step was asked (its device, say)
        if calls["interrupt"]:
            raise KeyboardInterrupt
        if calls["signal"] is not None:
            os.kill(os.getpid(), calls["signal"])
        Path(out_onnx).write_bytes(b"new faces")
        Path(out_onnx).with_suffix(".pt").write_bytes(b"new faces pt")

    monkeypatch.setattr(pipeline, "train_faces", train_faces)
    # the stand-in model and photos are not read (test_train_robust checks them)
    monkeypatch.setattr("vision.train.finetune.check_starting_model", lambda base: None)
    monkeypatch.setattr("vision.train.finetune.check_photos", lambda split: None)
    monkeypatch.setattr(run, "evaluate_model", lambda *a, **kw: None)
    monkeypatch.setattr(verify, "calibrate_verifier", lambda *a, **kw: None)
    return calls


def stand_in_shipping(monkeypatch) -> None:
    """The trained detector's shipping stood in for: its ONNX file holds ``b"tuned detector"``
    and its checkpoint beside it ``b"tuned weights"``."""
    import vision.train.pipeline as pipeline

    def ship_detector(weights, onnx, *, imgsz):
        Path(onnx).parent.mkdir(parents=True, exist_ok=True)
        Path(onnx).write_bytes(b"tuned detector")
        Path(onnx).with_suffix(".pt").write_bytes(b"tuned weights")
        return onnx

    monkeypatch.setattr(pipeline, "ship_detector", ship_detector)
