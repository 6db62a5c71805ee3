"""Small onnxruntime helpers shared by the reader's second-stage models (face classifier,
surface outline, off-table die model).

Example:
    >>> import numpy as np
    >>> softmax(np.array([[0.0, 0.0]], np.float32)).tolist()
    [[0.5, 0.5]]
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["cpu_session", "softmax"]


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


def softmax(logits: NDArray[np.floating]) -> NDArray[np.float32]:
    """Row-wise softmax of an N x C array of logits, as float32."""
    z = logits.astype(np.float32)
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    return p
