"""vision.runtime: the second-stage models' onnxruntime session and the softmax their scores go
through."""

from __future__ import annotations

import numpy as np
import pytest

from vision.runtime import SmallModel, softmax

onnx = pytest.importorskip("onnx", reason="the onnx package builds the test models")
from onnx import TensorProto, helper  # noqa: E402

from dicecam_testing import onnx_models as models  # noqa: E402


def test_softmax_is_row_wise_and_holds_for_large_logits():
    p = softmax(np.array([[0.0, 0.0], [2.0, 0.0], [1000.0, 0.0], [-1000.0, -1001.0]]))
    assert p.dtype == np.float32 and np.isfinite(p).all()
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-6)
    np.testing.assert_allclose(p[0], (0.5, 0.5))
    np.testing.assert_allclose(p[1], (np.exp(2) / (np.exp(2) + 1), 1 / (np.exp(2) + 1)), rtol=1e-6)
    np.testing.assert_allclose(p[2], (1.0, 0.0), atol=1e-7)
    np.testing.assert_allclose(p[3], (np.e / (np.e + 1), 1 / (np.e + 1)), rtol=1e-6)


def test_a_small_model_reads_its_shapes_metadata_and_any_float_input(tmp_path):
    path = models.bright_is_a_die(tmp_path / "check.onnx", threshold="0.4")
    model = SmallModel(path, threads=3)
    assert model.metadata["threshold"] == "0.4"
    options = model._session.get_session_options()
    assert (options.intra_op_num_threads, options.inter_op_num_threads) == (3, 1)
    assert options.log_severity_level == 3  # errors only: no warnings on every load
    # busy-waiting threads would take the cores from the detector that runs next
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    size = model.input_shape[-1]
    bright = np.ones((2, 3, size, size), np.float64)[:, :, :, ::-1]  # float64, not contiguous
    out = model.run(bright)
    assert out.shape == (2, 2) and out.dtype == np.float32


def test_a_model_with_two_outputs_is_refused_saying_so(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 2]) for n in ("a", "b")]
    nodes = [helper.make_node("Identity", ["x"], ["a"]), helper.make_node("Neg", ["x"], ["b"])]
    graph = helper.make_graph(nodes, "two_out", [x], outs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    path = tmp_path / "two.onnx"
    onnx.save(model, path)
    with pytest.raises(ValueError, match=r"^expected one input and one output, got 1 and 2$"):
        SmallModel(path)
