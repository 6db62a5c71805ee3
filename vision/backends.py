"""Where the detector runs: OpenVINO or onnxruntime, over the same ONNX file.

The detector is the reader's heaviest model. On x86 CPUs OpenVINO runs the shipped 512 px model
in about three quarters of onnxruntime's time (same float32 arithmetic, same outputs to 1e-4);
the small second-stage models (face classifier, outline) stay on onnxruntime, which is as fast
for them. ``auto`` (the default, ``DICECAM_BACKEND``) takes OpenVINO when it is installed and
onnxruntime otherwise.

Example:
    >>> detector = open_detector("models/dicecam-reader.onnx", threads=2, backend="onnxruntime")
    >>> detector.backend
    'onnxruntime'
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["BACKENDS", "Backend", "DetectorModel", "open_detector", "resolve_backend"]

Backend = Literal["auto", "openvino", "onnxruntime"]
BACKENDS: tuple[str, ...] = get_args(Backend)

STATIC_SHAPES = 4
"""OpenVINO compiles a model for each of the first this many single-photo input shapes it meets
(about 0.2 s each, 5-10% faster runs than the shape-free build). Batches of several photos, whose
size varies (the second look takes a few photos of a batch), and later shapes share one
shape-free build."""


COMPILED_KEPT = 24
"""How many OpenVINO builds (a file at a shape, with its settings) the process keeps, to be
shared by the readers it opens on the same file: a second ``DiceReader`` of one model, as tests
and the service's reload open, reuses the first one's builds instead of paying 0.2 s a shape."""

_compiled: dict[tuple[Any, ...], Any] = {}
_compiled_lock = threading.Lock()


def _compiled_model(core: Any, model: Any, key: tuple[Any, ...], config: dict[str, Any]) -> Any:
    """The OpenVINO build of ``model`` under ``config``, from the process's builds when one of
    ``key`` (file, its size and time, shape, settings) was made already."""
    with _compiled_lock:
        compiled = _compiled.pop(key, None)
        if compiled is None:
            compiled = core.compile_model(model, "CPU", config)
        _compiled[key] = compiled  # the newest last: the oldest goes first
        while len(_compiled) > COMPILED_KEPT:
            del _compiled[next(iter(_compiled))]
        return compiled


class DetectorModel(Protocol):
    """One ONNX model behind either runtime: run a batch, read its shapes and metadata."""

    backend: str
    input_name: str
    input_shape: list[int | str]
    """``(batch, 3, height, width)``; a dimension the model leaves free is a string."""
    output_shape: list[int | str]
    metadata: dict[str, str]

    def run(self, blob: NDArray[np.float32], *, lane: int = 0) -> NDArray[np.float32]:
        """The first output for ``blob``. ``lane`` keeps inputs of different shapes apart
        (the second look uses lane 1) where a runtime gains from it."""
        ...


def resolve_backend(backend: str) -> str:
    """The runtime ``backend`` names: ``auto`` is OpenVINO when installed, else onnxruntime.

    Raises:
        ValueError: an unknown name, or ``openvino`` when it is not installed.
    """
    name = backend.strip().lower()
    if name not in BACKENDS:
        raise ValueError(f"expected a backend among {', '.join(BACKENDS)}, got {backend!r}")
    has_openvino = importlib.util.find_spec("openvino") is not None
    if name == "auto":
        return "openvino" if has_openvino else "onnxruntime"
    if name == "openvino" and not has_openvino:
        raise ValueError(
            "backend 'openvino' asked for, but openvino is not installed "
            "(pip install openvino, or DICECAM_BACKEND=onnxruntime)"
        )
    return name


def open_detector(
    model: str | Path,
    *,
    threads: int = 2,
    backend: str = "auto",
    providers: Sequence[str] | None = None,
) -> DetectorModel:
    """Load ``model`` (ONNX) for CPU inference with ``threads`` threads on ``backend``.

    ``providers`` (onnxruntime execution providers) make onnxruntime the runtime whatever
    ``backend`` says. Raises whatever the runtime raises for a file it cannot load.
    """
    if providers and list(providers) != ["CPUExecutionProvider"]:
        return OnnxRuntimeDetector(model, threads, providers)
    if resolve_backend(backend) == "openvino":
        return OpenVINODetector(model, threads)
    return OnnxRuntimeDetector(model, threads, providers)


class OnnxRuntimeDetector:
    """onnxruntime session(s) of one ONNX file: one per lane, since onnxruntime re-plans its
    memory whenever one session's input shape changes."""

    backend = "onnxruntime"

    def __init__(
        self, model: str | Path, threads: int, providers: Sequence[str] | None = None
    ) -> None:
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = int(threads)
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.log_severity_level = 3
        # busy-waiting threads cost much more than they save when other jobs share the CPU
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._args = (str(model), opts, list(providers or ["CPUExecutionProvider"]))
        self._sessions: dict[int, Any] = {0: ort.InferenceSession(*self._args)}
        session = self._sessions[0]
        inp, out = session.get_inputs()[0], session.get_outputs()[0]
        self.input_name: str = inp.name
        self.input_shape: list[int | str] = list(inp.shape)
        self.output_shape: list[int | str] = list(out.shape)
        self._output_name: str = out.name
        self.metadata: dict[str, str] = dict(session.get_modelmeta().custom_metadata_map)

    def run(self, blob: NDArray[np.float32], *, lane: int = 0) -> NDArray[np.float32]:
        session = self._sessions.get(lane)
        if session is None:
            import onnxruntime as ort

            session = self._sessions[lane] = ort.InferenceSession(*self._args)
        return session.run([self._output_name], {self.input_name: blob})[0]


class OpenVINODetector:
    """An OpenVINO CPU build of one ONNX file, in float32 (OpenVINO would otherwise pick
    bfloat16 on CPUs that have it, which changes the readings).

    Safe to call from several threads (the service reads photos concurrently): an OpenVINO
    infer request runs one inference at a time, so runs take turns; each uses every thread
    it was given anyway."""

    backend = "openvino"

    def __init__(self, model: str | Path, threads: int) -> None:
        import openvino as ov

        self._core = ov.Core()
        self._model = self._core.read_model(str(model))
        stat = Path(model).stat()
        self._key = (str(Path(model).resolve()), stat.st_size, stat.st_mtime_ns, int(threads))
        self._config = {
            "INFERENCE_NUM_THREADS": int(threads),
            "INFERENCE_PRECISION_HINT": "f32",
            "PERFORMANCE_HINT": "LATENCY",
            "NUM_STREAMS": 1,
        }
        self._dynamic: Any = None
        self._static: dict[tuple[int, ...], Any] = {}
        self._lock = threading.Lock()
        inp, out = self._model.inputs[0], self._model.outputs[0]
        self.input_name = inp.get_any_name()
        self.input_shape = _dims(inp.get_partial_shape())
        self.output_shape = _dims(out.get_partial_shape())
        self.metadata = _metadata(self._model)
        if all(isinstance(d, int) for d in self.input_shape):
            self._request(tuple(self.input_shape))  # type: ignore[arg-type]

    def run(self, blob: NDArray[np.float32], *, lane: int = 0) -> NDArray[np.float32]:
        with self._lock:
            request = self._request(tuple(blob.shape))
            # the blob is read where it lies (no copy into the request's tensor); the output
            # is copied once, here, out of the request's memory, which the next run reuses
            request.infer({0: blob}, share_inputs=True, share_outputs=True)
            return np.array(request.get_output_tensor(0).data, copy=True)

    def _request(self, shape: tuple[int, ...]) -> Any:
        request = self._static.get(shape)
        if request is not None:
            return request
        if shape[0] == 1 and len(self._static) < STATIC_SHAPES:
            model = self._model.clone()
            model.reshape({0: list(shape)})
            compiled = _compiled_model(self._core, model, (*self._key, shape), self._config)
            request = self._static[shape] = compiled.create_infer_request()
            return request
        if self._dynamic is None:
            compiled = _compiled_model(self._core, self._model, (*self._key, None), self._config)
            self._dynamic = compiled.create_infer_request()
        return self._dynamic


def _dims(shape: Any) -> list[int | str]:
    return [d.get_length() if d.is_static else "?" for d in shape]


def _metadata(model: Any) -> dict[str, str]:
    """The ONNX file's metadata properties (ultralytics writes names, stride, imgsz there)."""
    info = model.get_rt_info()
    if "framework" not in info:
        return {}
    framework = info["framework"]
    return {str(key): framework[key].astype(str) for key in framework}
