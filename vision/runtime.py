"""The reader's small second-stage models (face classifier, die models, outline) on the CPU.

:class:`SmallModel` runs one ONNX file with onnxruntime. The face classifier and the three die
models (die check, cocked, off-table) ship as int8 (QDQ) builds (:mod:`vision.train.quantize`),
which onnxruntime runs in about 0.45-0.6 times the float32 time on this project's 2-core x86
CPU.

Example:
    >>> import numpy as np
    >>> softmax(np.array([[0.0, 0.0]], np.float32)).tolist()
    [[0.5, 0.5]]
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["SmallModel", "cpu_session", "mirror_mean", "softmax"]


def cpu_session(model: str | Path, threads: int) -> Any:
    """An onnxruntime CPU session of ``model`` with ``threads`` intra-op threads, quiet logs.

    Raises whatever onnxruntime raises for a file it cannot load (callers name the model).
    """
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = int(threads)
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.log_severity_level = 3
    # threads that busy-wait after a run take the cores from the next model (the detector)
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])


class SmallModel:
    """One ONNX model with one input and one output on onnxruntime's CPU provider: the shapes,
    the metadata and a ``run`` that takes the input array and returns the output array.

    Attributes:
        input_shape, output_shape: the dimensions; one the model leaves free is a string.
        metadata: the ONNX file's metadata properties.

    OpenVINO, which runs the detector, is not faster for these small models here: timed turn
    about in the reader on the benchmark's photos, 44.0 ms median with them on onnxruntime and
    44.3 ms on OpenVINO (their batch of crops changes size with every photo).
    """

    def __init__(self, model: str | Path, *, threads: int = 1) -> None:
        self._session = cpu_session(model, threads)
        inp, out = self._session.get_inputs(), self._session.get_outputs()
        if len(inp) != 1 or len(out) != 1:
            raise ValueError(f"expected one input and one output, got {len(inp)} and {len(out)}")
        self._input: str = inp[0].name
        self.input_shape: list[int | str] = list(inp[0].shape)
        self.output_shape: list[int | str] = list(out[0].shape)
        self.metadata: dict[str, str] = dict(self._session.get_modelmeta().custom_metadata_map)

    def run(self, blob: NDArray[np.float32]) -> NDArray[np.float32]:
        """The model's output for ``blob``."""
        return self._session.run(None, {self._input: np.ascontiguousarray(blob, np.float32)})[0]

    def __repr__(self) -> str:
        return f"SmallModel(input={self.input_shape}, output={self.output_shape})"


def softmax(logits: NDArray[np.floating]) -> NDArray[np.float32]:
    """Row-wise softmax of an N x C array of logits, as float32."""
    z = logits.astype(np.float32)
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    return p


def mirror_mean(
    read: Callable[[NDArray[np.float32]], NDArray[np.float32]],
    blob: NDArray[np.float32],
    doubtful: Callable[[NDArray[np.float32]], NDArray[np.bool_]] | None = None,
) -> NDArray[np.float32]:
    """``read`` (probabilities, one row per crop) of the crops ``blob`` (N x C x H x W), each
    averaged with its mirror image's (left-right): all of them in one run when ``doubtful`` is
    None, else only the rows ``doubtful`` picks from the crops' own probabilities, read apart.

    Example:
        >>> blob = np.zeros((2, 1, 1, 2), np.float32)
        >>> blob[0, 0, 0, 0] = 1.0  # crop 0 bright on its left, its mirror on its right
        >>> left = lambda b: b[:, 0, 0, :1]  # P = brightness of the left pixel
        >>> mirror_mean(left, blob).ravel().tolist()
        [0.5, 0.0]
        >>> mirror_mean(left, blob, lambda p: p[:, 0] < 0.9).ravel().tolist()
        [1.0, 0.0]
    """
    if doubtful is None:
        n = len(blob)
        both = read(np.concatenate([blob, blob[..., ::-1]]))
        return both.reshape(2, n, *both.shape[1:]).mean(axis=0)
    probs = read(blob)
    rows = np.flatnonzero(doubtful(probs))
    if len(rows):
        probs[rows] = (probs[rows] + read(np.ascontiguousarray(blob[rows, ..., ::-1]))) / 2
    return probs
