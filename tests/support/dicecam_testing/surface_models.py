"""Tiny ONNX surface models whose probability grid can be counted by hand (needs ``onnx``)."""

from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

__all__ = ["grid_model", "logit"]


def logit(p: float) -> float:
    return math.log(p / (1 - p))


def grid_model(
    path,
    weights,
    bias,
    *,
    shape: tuple[int | str, int | str] = (32, 32),
    meta: dict[str, str] | None = None,
):
    """A surface model: one 4x4 stride-4 convolution and a sigmoid, so layer ``k`` of each grid
    cell is ``sigmoid(weights[k] . (mean of each input channel over the cell) + bias[k])``.
    ``weights`` is (layers, channels); ``shape`` the input's (h, w), a name where it is free."""
    weights = np.asarray(weights, np.float32)
    layers, channels = weights.shape
    kernel = np.repeat(np.repeat(weights[:, :, None, None] / 16, 4, 2), 4, 3)
    inp = helper.make_tensor_value_info("image", TensorProto.FLOAT, ["b", channels, *shape])
    out_hw = [s // 4 if isinstance(s, int) else f"{s}4" for s in shape]
    out = helper.make_tensor_value_info("surface", TensorProto.FLOAT, ["b", layers, *out_hw])
    nodes = [
        helper.make_node("Conv", ["image", "k", "c"], ["z"], kernel_shape=[4, 4], strides=[4, 4]),
        helper.make_node("Sigmoid", ["z"], ["surface"]),
    ]
    inits = [
        numpy_helper.from_array(kernel.astype(np.float32), "k"),
        numpy_helper.from_array(np.asarray(bias, np.float32), "c"),
    ]
    model = helper.make_model(
        helper.make_graph(nodes, "grid", [inp], [out], inits),
        opset_imports=[helper.make_opsetid("", 13)],
    )
    model.ir_version = 8
    if meta:
        helper.set_model_props(model, meta)
    onnx.checker.check_model(model)
    path.write_bytes(model.SerializeToString())
    return path
