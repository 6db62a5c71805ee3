"""Train the YOLO dice detector with ultralytics and export it to ONNX for the runtime."""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vision.atomic import WRITE_ERRORS, atomic_copy, write_failure

from .env import prepare_ultralytics

__all__ = ["export_onnx", "train_detector"]


def train_detector(
    data_yaml: Path,
    out_dir: Path,
    *,
    model: str = "yolo11n.yaml",
    imgsz: int = 320,
    epochs: int = 30,
    batch: int = 16,
    seed: int = 0,
    augment: dict[str, Any] | None = None,
    validate: bool = False,
    time_hours: float | None = None,
    fraction: float = 1.0,
    patience: int = 100,
    cache: str | bool = False,
    single_cls: bool = False,
    freeze: int = 0,
    device: str = "cpu",
) -> Path:
    """Train a detector and return the path of its final weights (``.pt``).

    ``model`` is an architecture yaml shipped with ultralytics (``yolo11n.yaml``: built from
    scratch, nothing downloaded) or a checkpoint ``.pt`` of our own to fine-tune.
    ``single_cls`` trains one class (a die, whatever its face): its ONNX then needs the face
    classifier beside it. ``freeze`` keeps the first layers as they are (10: the backbone).
    ``device`` is ``"cpu"`` or a CUDA device (``"0"``): on a GPU, photos are loaded by worker
    processes (up to 8) beside the training.
    """
    ultralytics = prepare_ultralytics()
    out_dir = Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    yolo = ultralytics.YOLO(str(model))
    args: dict[str, Any] = dict(
        data=str(Path(data_yaml).resolve()),
        imgsz=imgsz,
        epochs=epochs,
        batch=batch,
        seed=seed,
        deterministic=False,
        device=device,
        workers=0 if device == "cpu" else min(8, os.cpu_count() or 1),
        project=str(out_dir),
        name="train",
        exist_ok=True,
        val=validate,
        plots=False,
        amp=False,
        verbose=False,
        fraction=fraction,
        patience=patience,
        cache=cache,
        single_cls=single_cls,
        freeze=freeze or None,
        pretrained=str(model).endswith(".pt"),
    )
    if time_hours:
        args["time"] = time_hours
    args.update(augment or {})
    start = time.perf_counter()
    weights = out_dir / "train" / "weights"
    try:
        yolo.train(**args)
    except BaseException as exc:  # Ctrl-C too: no checkpoint left cut
        failure = _checkpoint_failure(exc, weights)
        if failure is None or failure is exc:
            raise
        raise failure from exc
    best = weights / "best.pt"
    final = best if best.is_file() else weights / "last.pt"
    print(f"trained in {time.perf_counter() - start:.0f} s -> {final}")
    return final


def _checkpoint_failure(exc: BaseException, weights: Path) -> OSError | None:
    """Training stopped on ``exc``: remove the checkpoints in ``weights`` it left cut (a later
    ``--soup`` or ``--init`` would take them for weights) and return the OSError of a disk error
    while ultralytics wrote one (its ``write_bytes`` names no file; torch.save raises
    RuntimeError), naming the cut checkpoint, else the training folder; None for other errors."""
    import zipfile

    cut = sorted(p for p in weights.glob("*.pt") if not zipfile.is_zipfile(p))
    where = cut[0] if cut else weights.parent
    failure = None
    if isinstance(exc, RuntimeError) or (
        isinstance(exc, OSError) and exc.errno in WRITE_ERRORS and exc.filename is None
    ):
        failure = write_failure(exc, where)  # before the cut file frees its space
    for p in cut:
        p.unlink(missing_ok=True)
    return failure


@contextlib.contextmanager
def _quiet_export_failure() -> Iterator[None]:
    """Without ultralytics' own "export failure" log line: the error it raises again is said
    once, by the caller (``dicecam train`` in one line)."""
    import logging

    from ultralytics.utils import LOGGER

    def keep(record: logging.LogRecord) -> bool:
        return "export failure" not in record.getMessage()

    LOGGER.addFilter(keep)
    try:
        yield
    finally:
        LOGGER.removeFilter(keep)


def export_onnx(weights: Path, out_file: Path, *, imgsz: int = 320, dynamic: bool = True) -> Path:
    """Export ``weights`` to an ONNX file the runtime loads with onnxruntime (no NMS inside).

    ``dynamic`` exports free batch, height and width: the reader then feeds each photo at its
    own aspect (a 640x480 photo at ``imgsz`` 416 runs at 416x320), which is both faster and
    sharper than a square input. ``imgsz`` stays in the metadata as the longer side.

    ultralytics writes its export beside the weights (``NAME.onnx``), which for a shipped
    ``models/NAME.pt`` is the shipped model itself: the export runs on a copy in a temporary
    folder, and only ``out_file`` is written.
    """
    ultralytics = prepare_ultralytics()
    with tempfile.TemporaryDirectory(prefix="dicecam-export-") as tmp:
        copy = Path(tmp) / Path(weights).name
        atomic_copy(weights, copy, sync=False)  # a full disk names the copy, not the weights
        yolo = ultralytics.YOLO(str(copy))
        try:
            with _quiet_export_failure():
                exported = Path(
                    yolo.export(
                        format="onnx",
                        imgsz=imgsz,
                        dynamic=dynamic,
                        simplify=True,
                        opset=17,
                        nms=False,
                    )
                )
        except OSError as exc:  # the export of a temporary folder on a full disk names no file
            if exc.errno not in WRITE_ERRORS or exc.filename is not None:
                raise
            raise write_failure(exc, copy.with_suffix(".onnx")) from None
        out_file = Path(out_file)
        out_file.parent.mkdir(parents=True, exist_ok=True)
        atomic_copy(exported, out_file)  # a killed export never leaves half a model
    return out_file
