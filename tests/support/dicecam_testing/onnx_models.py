"""Tiny ONNX models with known outputs, for the reader's and the table's tests.

- :func:`make_model`: a detector shaped like an ultralytics export, whose output is a fixed
  prediction tensor (:func:`raw_preds`) plus, optionally, the mean brightness of the input added
  to chosen scores, so a test knows exactly what the reader must decode (and which image of a
  batch a die belongs to);
- :func:`make_classifier`: a face classifier whose logits follow a crop's brightness;
- :func:`bright_is_off` / :func:`bright_is_a_die`: a two-class crop model (the off-table die
  model, the die check, the cocked-die model) whose second class wins on bright crops.

Importing this module skips the importing test module when the onnx package is missing.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the onnx package builds the test models")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

NAMES7 = "{0: '1', 1: '2', 2: '3', 3: '4', 4: '5', 5: '6', 6: 'cocked'}"


def _save(graph, path: Path, meta: dict[str, str] | None = None) -> Path:
    """Write ``graph`` (opset 13, IR 8, checked) to ``path`` with ``meta`` as its metadata."""
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    if meta:
        helper.set_model_props(model, meta)
    onnx.checker.check_model(model)
    path.write_bytes(model.SerializeToString())
    return path


def raw_preds(
    dice: list[tuple[float, float, float, float, dict[int, float]]], nc: int = 7, n: int = 64
):
    """(4 + nc, n) raw predictions: each die is (cx, cy, w, h, {class: score}); other anchors 0."""
    p = np.zeros((4 + nc, n), np.float32)
    for j, (cx, cy, w, h, scores) in enumerate(dice):
        p[:4, j] = (cx, cy, w, h)
        for cls, s in scores.items():
            p[4 + cls, j] = s
    return p


def make_model(
    path: Path,
    preds: np.ndarray,
    *,
    imgsz: tuple[int, int] = (320, 320),
    batch: int | str = 1,
    names: str | None = NAMES7,
    end2end: bool = False,
    brightness_mask: np.ndarray | None = None,
    dynamic: bool = False,
) -> Path:
    """Write an ONNX model whose output is ``preds`` (plus mean input * ``brightness_mask``).

    ``dynamic``: free input height and width, as ultralytics' ``dynamic=True`` export; ``imgsz``
    is then only in the metadata.
    """
    h, w = ("height", "width") if dynamic else imgsz
    inp = helper.make_tensor_value_info("images", TensorProto.FLOAT, [batch, 3, h, w])
    out = helper.make_tensor_value_info("output0", TensorProto.FLOAT, [batch, *preds.shape])
    mask = np.zeros_like(preds) if brightness_mask is None else brightness_mask
    inits = [
        numpy_helper.from_array(preds[None].astype(np.float32), "preds"),
        numpy_helper.from_array(mask[None].astype(np.float32), "mask"),
        numpy_helper.from_array(np.array([3], np.int64), "axis3"),
    ]
    nodes = [
        helper.make_node("ReduceMean", ["images"], ["mean4"], axes=[1, 2, 3], keepdims=1),
        helper.make_node("Squeeze", ["mean4", "axis3"], ["mean3"]),  # (B, 1, 1)
        helper.make_node("Mul", ["mean3", "mask"], ["lit"]),
        helper.make_node("Add", ["lit", "preds"], ["output0"]),
    ]
    graph = helper.make_graph(nodes, "fake_dice_detector", [inp], [out], inits)
    meta = {"imgsz": str(list(imgsz)), "stride": "32", "task": "detect", "end2end": str(end2end)}
    if names is not None:
        meta["names"] = names
    return _save(graph, path, meta)


def make_classifier(
    path: Path, logits: np.ndarray, brightness_mask: np.ndarray, *, size: int = 48
) -> Path:
    """A face classifier (N x 3 x size x size -> N x 7) whose logits are ``logits`` plus the crop's
    mean brightness (0..1) times ``brightness_mask``."""
    inp = helper.make_tensor_value_info("images", TensorProto.FLOAT, ["n", 3, size, size])
    out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["n", len(logits)])
    inits = [
        numpy_helper.from_array(logits[None].astype(np.float32), "base"),
        numpy_helper.from_array(brightness_mask[None].astype(np.float32), "mask"),
    ]
    nodes = [
        helper.make_node("ReduceMean", ["images"], ["mean"], axes=[1, 2, 3], keepdims=0),
        helper.make_node("Unsqueeze", ["mean", "axis1"], ["mean2"]),  # (N, 1)
        helper.make_node("Mul", ["mean2", "mask"], ["lit"]),
        helper.make_node("Add", ["lit", "base"], ["logits"]),
    ]
    inits.append(numpy_helper.from_array(np.array([1], np.int64), "axis1"))
    graph = helper.make_graph(nodes, "fake_face_classifier", [inp], [out], inits)
    return _save(graph, path)


def bright_is_off(path: Path, classes: int = 2, meta: dict[str, str] | None = None) -> Path:
    """logits (on, off) = (0, 40 * (mean brightness - 0.5)): P(off) > 0.5 on bright crops
    (48 x 48), P(last class) > 0.99 on bright crops and < 0.01 on dark ones; ``meta`` in the
    file's metadata."""
    inp = helper.make_tensor_value_info("images", TensorProto.FLOAT, ["n", 3, 48, 48])
    out = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["n", classes])
    w = np.zeros((1, classes), np.float32)
    w[0, -1] = 40.0
    b = np.zeros((classes,), np.float32)
    b[-1] = -20.0
    nodes = [
        helper.make_node("ReduceMean", ["images"], ["m"], axes=[1, 2, 3], keepdims=0),
        helper.make_node("Unsqueeze", ["m", "one"], ["m2"]),
        helper.make_node("MatMul", ["m2", "w"], ["mw"]),
        helper.make_node("Add", ["mw", "b"], ["logits"]),
    ]
    inits = [
        numpy_helper.from_array(w, "w"),
        numpy_helper.from_array(b, "b"),
        numpy_helper.from_array(np.array([1], np.int64), "one"),
    ]
    graph = helper.make_graph(nodes, "bright_is_off", [inp], [out], inits)
    return _save(graph, path, meta)


def bright_is_a_die(path: Path, **meta: str) -> Path:
    """:func:`bright_is_off` with ``meta`` in the file: P(second class) > 0.99 on bright crops,
    < 0.01 on dark ones (a die check's P(a die), a cocked-die model's P(cocked))."""
    return bright_is_off(path, meta=meta)
