"""The reader's detector: its ONNX file checked, loaded on its runtime (once per file and
runtime: :func:`vision.model_files.kept_model`) and read for what it says of itself.

Example:
    >>> detector, info = open_reader_model(
    ...     "models/dicecam-reader.onnx", threads=2, backend="onnxruntime"
    ... )
    >>> detector.backend, info.imgsz, info.stride
    ('onnxruntime', (512, 512), 32)
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from vision.backends import DetectorModel
from vision.model_files import check_model_file, kept_model
from vision.stages import ModelError
from vision.yolo_output import DetectorInfo

__all__ = ["COMPANIONS", "HINT", "open_reader_model"]

HINT = "point DICECAM_MODEL (or --model) at a detector's ONNX export (`dicecam train` makes one)"
"""Said after a reader model path that names no ONNX file."""

COMPANIONS = ("-faces", "-cocked", "-verify")
"""The name endings of the second-stage models beside a detector: a folder named as the reader
model is said with the detectors in it, not these."""


def open_reader_model(
    path: str | Path,
    *,
    threads: int,
    backend: str,
    providers: Sequence[str] | None = None,
) -> tuple[DetectorModel, DetectorInfo]:
    """The detector of ``path`` on ``backend`` (see :func:`vision.backends.open_detector`) and
    what its export says of itself (input size, stride, classes).

    Raises:
        ModelError: the path names no ONNX file, the runtime cannot load it, or it is not a
            dice detector export.
        ValueError: ``backend`` is unknown or not installed.
    """
    from vision.backends import open_detector, resolve_backend

    path = Path(path)
    try:
        check_model_file(path, "reader model", leave_out=COMPANIONS, hint=HINT)
    except ValueError as exc:
        raise ModelError(str(exc)) from None
    backend = resolve_backend(backend)
    options = ("detector", backend, int(threads), tuple(providers or ()))
    try:
        detector = kept_model(
            path,
            options,
            lambda: open_detector(path, threads=threads, backend=backend, providers=providers),
        )
    except Exception as exc:  # the runtimes' messages run over several lines
        why = " ".join(str(exc).split())
        raise ModelError(
            f"cannot load reader model {path} (expected an ONNX export of a dice detector; "
            f"truncated or corrupt?): {why}"
        ) from None
    try:
        info = DetectorInfo.read(detector.metadata, detector.input_shape, detector.output_shape)
    except ValueError as exc:
        raise ModelError(f"{path}: {exc}") from None
    return detector, info
