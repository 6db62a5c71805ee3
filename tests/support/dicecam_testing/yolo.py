"""ultralytics stood in for: what the detector's training asks of it, without training."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

__all__ = ["recording_ultralytics"]


def recording_ultralytics(monkeypatch) -> list[dict[str, Any]]:
    """Make :func:`vision.train.detector.train_detector` train a stand-in ``YOLO``: each call of
    its ``train`` is recorded (its keyword arguments, in the returned list) and writes the
    ``last.pt`` ultralytics would."""
    import vision.train.detector as detector

    calls: list[dict[str, Any]] = []

    class RecordingYolo:
        def __init__(self, model: str) -> None:
            self.model = model

        def train(self, **kwargs: Any) -> None:
            calls.append(kwargs)
            weights = Path(kwargs["project"]) / kwargs["name"] / "weights"
            weights.mkdir(parents=True)
            (weights / "last.pt").write_bytes(b"weights")

    fake = types.SimpleNamespace(YOLO=RecordingYolo)
    monkeypatch.setattr(detector, "prepare_ultralytics", lambda: fake)
    return calls
