"""The off-table die model's reading of each die: what its crop shows, the mirror it averages
with (``tta``), a probability exactly at its threshold, and its shipped defaults."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vision.table import DEFAULT_OFFTABLE_MODEL, OffTableModel, context_crop

pytest.importorskip("onnx", reason="the onnx package builds the test models")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from dicecam_testing.onnx_models import _save, bright_is_off  # noqa: E402


def bright_left_is_off(path: Path, size: int = 48, **meta: str) -> Path:
    """logits (on, off) = (0, 40 * (mean brightness of the crop's left half - 0.5)) from
    ``size`` px crops: a model that a mirror image reads otherwise."""
    inp = helper.make_tensor_value_info("images", TensorProto.FLOAT, ["n", 3, size, size])
    out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["n", 2])
    inits = [
        numpy_helper.from_array(np.array([0], np.int64), "start"),
        numpy_helper.from_array(np.array([size // 2], np.int64), "end"),
        numpy_helper.from_array(np.array([3], np.int64), "axis"),
        numpy_helper.from_array(np.array([1], np.int64), "one"),
        numpy_helper.from_array(np.array([[0.0, 40.0]], np.float32), "w"),
        numpy_helper.from_array(np.array([0.0, -20.0], np.float32), "b"),
    ]
    nodes = [
        helper.make_node("Slice", ["images", "start", "end", "axis"], ["left"]),
        helper.make_node("ReduceMean", ["left"], ["m"], axes=[1, 2, 3], keepdims=0),
        helper.make_node("Unsqueeze", ["m", "one"], ["m2"]),
        helper.make_node("MatMul", ["m2", "w"], ["mw"]),
        helper.make_node("Add", ["mw", "b"], ["logits"]),
    ]
    graph = helper.make_graph(nodes, "bright_left_is_off", [inp], [out], inits)
    return _save(graph, path, meta)


def test_the_crop_reaches_context_times_the_die_and_no_further():
    """A 10 px die at x 40..50 with context 4: the crop spans 25..65, so white from x=67 on
    and up to x=23 stays out of it, and a crop of context 5 (20..70) takes it in."""
    image = np.zeros((100, 100, 3), np.uint8)
    image[:, :24] = 255
    image[:, 67:] = 255
    box = (40, 40, 50, 50)
    assert context_crop(image, box).max() == 0
    assert context_crop(image, box, context=5.0).max() == 255


def test_a_mirrored_reading_is_averaged_in_only_when_the_model_asks_for_it(tmp_path):
    image = np.zeros((100, 100, 3), np.uint8)
    image[:, :45] = 255  # bright left of the die's centre, dark right of it
    box = [(40, 40, 50, 50)]
    plain = OffTableModel(bright_left_is_off(tmp_path / "plain.onnx"))
    assert plain.probability(image, box)[0] > 0.99
    mirrored = OffTableModel(bright_left_is_off(tmp_path / "tta.onnx", tta=" True "))
    assert mirrored.tta
    assert mirrored.probability(image, box)[0] == pytest.approx(0.5, abs=0.01)


def test_a_probability_exactly_at_the_threshold_flags_the_die(tmp_path):
    image = np.full((100, 100, 3), 140, np.uint8)
    model = OffTableModel(bright_is_off(tmp_path / "m.onnx"))
    [p] = model.probability(image, [(40, 40, 50, 50)])
    assert 0.05 < p < 0.95
    model.threshold = float(p)
    assert model.flags(image, [(40, 40, 50, 50)]).tolist() == [True]


def test_the_threshold_defaults_to_0_8_and_the_model_to_the_shipped_one(tmp_path):
    assert OffTableModel(bright_is_off(tmp_path / "m.onnx")).threshold == 0.8
    if not DEFAULT_OFFTABLE_MODEL.is_file():
        pytest.skip(f"no shipped off-table model at {DEFAULT_OFFTABLE_MODEL}")
    assert OffTableModel().model_path == DEFAULT_OFFTABLE_MODEL


def test_the_crop_size_and_context_come_from_the_model_file(tmp_path):
    model = OffTableModel(bright_left_is_off(tmp_path / "m.onnx", size=32, context="2.5"))
    assert (model.size, model.context) == (32, 2.5)
    image = np.zeros((100, 100, 3), np.uint8)
    image[:, :36] = 255  # left of x=36: 28% of a 2.5 crop's left half, 55% of a 4 crop's
    box = [(40, 40, 50, 50)]
    assert model.probability(image, box)[0] < 0.01
    plain = OffTableModel(bright_left_is_off(tmp_path / "plain.onnx"))
    assert plain.context == 4.0 and plain.probability(image, box)[0] > 0.5
