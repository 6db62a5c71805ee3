"""`dicecam train --from --freeze N`: the detector's first N layers reach ultralytics as the
layers to keep; 0 (the default) keeps none, which ultralytics is told as None."""

from __future__ import annotations

import types
from pathlib import Path

import pytest


class _RecordingYolo:
    """Stands in for ultralytics.YOLO: records what train() is asked, writes the weights."""

    calls: list[dict] = []

    def __init__(self, model: str) -> None:
        self.model = model

    def train(self, **kwargs) -> None:
        self.calls.append(kwargs)
        weights = Path(kwargs["project"]) / kwargs["name"] / "weights"
        weights.mkdir(parents=True)
        (weights / "last.pt").write_bytes(b"weights")


@pytest.mark.parametrize(("freeze", "told"), [(0, None), (2, 2), (10, 10)])
def test_the_layers_to_keep_reach_ultralytics(tmp_path, monkeypatch, freeze, told):
    import vision.train.detector as detector

    monkeypatch.setattr(
        detector, "prepare_ultralytics", lambda: types.SimpleNamespace(YOLO=_RecordingYolo)
    )
    _RecordingYolo.calls.clear()
    detector.train_detector(tmp_path / "data.yaml", tmp_path / "out", freeze=freeze)
    (call,) = _RecordingYolo.calls
    assert call["freeze"] == told
