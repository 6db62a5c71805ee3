"""The tests' tiny ONNX models (``tests/support/dicecam_testing/onnx_models.py``) output what
they promise, so the tests built on them know what the reader must decode."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the onnx package builds the test models")
from dicecam_testing.onnx_models import (  # noqa: E402
    bright_is_a_die,
    make_classifier,
    make_model,
    raw_preds,
)


def _session(path):
    import onnxruntime as ort

    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def test_fake_model_outputs_its_predictions(tmp_path):
    preds = raw_preds([(10, 20, 30, 40, {4: 0.9})])
    path = make_model(tmp_path / "m.onnx", preds, batch="b")
    out = _session(path).run(None, {"images": np.zeros((2, 3, 320, 320), np.float32)})[0]
    assert out.shape == (2, 11, 64)
    np.testing.assert_allclose(out[1], preds)


def test_fake_classifier_adds_the_crop_brightness_to_its_logits(tmp_path):
    mask = np.array([0, 0, 0, 0, 0, 2, 0], np.float32)
    path = make_classifier(tmp_path / "c.onnx", np.arange(7, dtype=np.float32), mask)
    crops = np.stack([np.zeros((3, 48, 48), np.float32), np.full((3, 48, 48), 0.5, np.float32)])
    out = _session(path).run(None, {"images": crops})[0]
    np.testing.assert_allclose(out, [np.arange(7), np.arange(7) + mask * 0.5], atol=1e-6)


def test_bright_crops_take_the_second_class(tmp_path):
    path = bright_is_a_die(tmp_path / "d.onnx", context="2.0")
    crops = np.stack([np.full((3, 48, 48), v, np.float32) for v in (0.1, 0.9)])
    logits = _session(path).run(None, {"images": crops})[0]
    assert logits[0, 1] < logits[0, 0] and logits[1, 1] > logits[1, 0]
    assert {p.key: p.value for p in onnx.load(str(path)).metadata_props} == {"context": "2.0"}
