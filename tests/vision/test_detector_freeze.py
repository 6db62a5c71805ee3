"""`dicecam train --from --freeze N`: the detector's first N layers reach ultralytics as the
layers to keep; 0 (the default) keeps none, which ultralytics is told as None."""

from __future__ import annotations

import pytest

from dicecam_testing.yolo import recording_ultralytics


@pytest.mark.parametrize(("freeze", "told"), [(0, None), (2, 2), (10, 10)])
def test_the_layers_to_keep_reach_ultralytics(tmp_path, monkeypatch, freeze, told):
    import vision.train.detector as detector

    calls = recording_ultralytics(monkeypatch)
    detector.train_detector(tmp_path / "data.yaml", tmp_path / "out", freeze=freeze)
    (call,) = calls
    assert call["freeze"] == told
