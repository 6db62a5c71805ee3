"""Int8 face classifier: static post-training quantization of its ONNX export.

The face classifier reads every die of every photo (twice, with its mirror image), so it is the
reader's second-heaviest model after the detector. Its int8 build runs in about 0.45 times the
float32 time with onnxruntime on a CPU with int8 dot-product units (AVX-512 VNNI here), and reads
the dice as the float model does (see the reader's model card for the figures). The build is
onnxruntime's static quantization: QDQ nodes, int8 weights per output channel, uint8
activations whose ranges are the minimum and maximum seen on calibration crops (a random sample
of the training crops with their mirror images, as the reader reads them). Both runtimes load
the file; the ``.pt`` beside it stays float32 for fine-tuning.

Example:
    >>> quantize_classifier("models/m-faces.onnx", crops)  # doctest: +SKIP
    PosixPath('models/m-faces.onnx')
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["CALIBRATION_CROPS", "INT8_METADATA", "is_int8", "quantize_classifier"]

CALIBRATION_CROPS = 768
"""Crops drawn for calibration (each also read mirrored): enough for stable ranges, and
quick (about 10 s for the shipped classifier)."""

INT8_METADATA = "int8"
"""Metadata key the quantized file carries (``"calibration crops: N"``)."""


def quantize_classifier(
    model: str | Path,
    crops: NDArray[np.uint8],
    out: str | Path | None = None,
    *,
    samples: int = CALIBRATION_CROPS,
    seed: int = 0,
    batch: int = 16,
) -> Path:
    """Quantize the float ONNX classifier ``model`` to int8, calibrated on ``crops``
    (N x S x S x 3 uint8 BGR at the classifier's input size, as
    :func:`vision.train.crops.load_crops` gives them and the classifier trains on them), into
    ``out`` (default: in place).

    Raises:
        ValueError: no crops, or crops of another shape than the model reads.
    """
    import onnx
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )
    from onnxruntime.quantization.shape_inference import quant_pre_process

    model, out = Path(model), Path(out) if out is not None else Path(model)
    graph = onnx.load(str(model))
    dims = [d.dim_value or d.dim_param for d in graph.graph.input[0].type.tensor_type.shape.dim]
    crops = np.asarray(crops)
    if (
        crops.ndim != 4
        or not len(crops)
        or crops.shape[3] != 3
        or list(crops.shape[1:3]) != dims[2:]
    ):
        raise ValueError(
            f"expected calibration crops N x {dims[2]} x {dims[3]} x 3 (N >= 1), got {crops.shape}"
        )
    if INT8_METADATA in {p.key for p in graph.metadata_props}:
        raise ValueError(f"{model} is already quantized: quantize its float export")
    name = graph.graph.input[0].name
    rng = np.random.default_rng(seed)
    pick = crops[rng.permutation(len(crops))[:samples], :, :, ::-1]  # BGR -> RGB: the model's input
    blob = pick.transpose(0, 3, 1, 2).astype(np.float32) * np.float32(1 / 255)
    blob = np.concatenate([blob, blob[..., ::-1]])  # the reader reads each die mirrored too

    class Crops(CalibrationDataReader):
        def __init__(self) -> None:
            self._batches: Iterator[dict[str, NDArray[np.float32]]] = iter(
                {name: np.ascontiguousarray(blob[i : i + batch])}
                for i in range(0, len(blob), batch)
            )

        def get_next(self) -> dict[str, NDArray[np.float32]] | None:
            return next(self._batches, None)

    with tempfile.TemporaryDirectory() as tmp:
        pre, q = Path(tmp) / "pre.onnx", Path(tmp) / "int8.onnx"
        quant_pre_process(str(model), str(pre))
        quantize_static(
            str(pre),
            str(q),
            Crops(),
            quant_format=QuantFormat.QDQ,
            per_channel=True,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
            calibrate_method=CalibrationMethod.MinMax,
        )
        result = onnx.load(str(q))
    del result.metadata_props[:]
    for prop in graph.metadata_props:  # keep what the float file said of itself
        result.metadata_props.add(key=prop.key, value=prop.value)
    result.metadata_props.add(key=INT8_METADATA, value=f"calibration crops: {len(pick)}")
    out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(result, str(out))
    return out


def is_int8(metadata: dict[str, str]) -> bool:
    """Whether a model's metadata marks it as an int8 build of :func:`quantize_classifier`."""
    return INT8_METADATA in metadata
