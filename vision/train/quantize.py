"""Int8 builds of the reader's small models: static post-training quantization of their ONNX
export.

The face classifier reads every die of every photo (twice, with its mirror image), so it is the
reader's second-heaviest model after the detector. Its int8 build runs in about 0.45 times the
float32 time with onnxruntime on a CPU with int8 dot-product units (AVX-512 VNNI here), and reads
the dice as the float model does (see the reader's model card for the figures). The build is
onnxruntime's static quantization: QDQ nodes, 8-bit weights per output channel, uint8
activations whose ranges are the minimum and maximum seen on calibration crops (a random sample
of the training crops with their mirror images, as the reader reads them). Both runtimes load
the file; the ``.pt`` beside it stays float32 for fine-tuning.

The weights are unsigned (uint8, "U8U8") since 2026-11-27. Signed weights with unsigned
activations ("U8S8") sum their products in 16 bits on an x86 CPU without VNNI (AVX2 only, such
as the AMD EPYC of one session, or an older laptop), where they saturate: the builds made so
read the dice worse there than the float model does (the real eval set: face accuracy 95.20%
against 96.86%; the off-table model's probability off by up to 0.32, the die check's by 0.84),
and the same as it on the VNNI CPUs they were measured on. Unsigned weights read as the float
model does on both (onnxruntime's documentation of quantization names this trade).

The three die models that read each die with its surroundings (the die check, the cocked-die
model and the off-table model: :class:`vision.table.dice.ContextDieModel`) ship as int8 builds
too (:func:`quantize_die_model`, ``python -m vision.train.quantize MODEL.onnx ... --data DIR``):
each is exported again from its float ``.pt``, keeps the metadata the shipped file carries
(context, threshold, mirror image) and is calibrated on context crops of the labelled dice of
``--data``, plus one box of a die's size at a random place of each photo (the die check also
sees things that are not dice).

The outline model (:class:`vision.table.SurfaceModel`) runs once a photo; its int8 build
(:func:`quantize_surface_model`) is quantized from the float ONNX file the trainer writes,
calibrated on whole photos squeezed as the runtime squeezes them.

Example (not run: minutes of calibration, and it writes models):
    >>> quantize_classifier("models/m-faces.onnx", crops)  # doctest: +SKIP
    PosixPath('models/m-faces.onnx')
    >>> quantize_die_model("models/m-verify.onnx", ["photos/"])  # doctest: +SKIP
    PosixPath('models/m-verify.onnx')
    >>> quantize_surface_model("runs/surface.onnx", ["photos/"], "models/s.onnx")  # doctest: +SKIP
    PosixPath('models/s.onnx')
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from vision.atomic import replacing
from vision.boxes import box_side

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "CALIBRATION_CROPS",
    "INT8_METADATA",
    "die_model_crops",
    "is_int8",
    "quantize_classifier",
    "quantize_die_model",
    "quantize_surface_model",
    "surface_photos",
]

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
    symbolic_shapes: bool = True,
) -> Path:
    """Quantize the float ONNX classifier ``model`` to int8, calibrated on ``crops``
    (N x S x S x 3 uint8 BGR at the classifier's input size, as
    :func:`vision.train.crops.load_crops` gives them and the classifier trains on them), into
    ``out`` (default: in place). ``symbolic_shapes``: run onnxruntime's symbolic shape
    inference before quantizing (False for a model it cannot follow).

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
        # symbolic shape inference stops at the outline model's Resize, and a failed try
        # leaves temporary files in the working folder: that model skips it
        quant_pre_process(str(model), str(pre), skip_symbolic_shape=not symbolic_shapes)
        quantize_static(
            str(pre),
            str(q),
            Crops(),
            quant_format=QuantFormat.QDQ,
            per_channel=True,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QUInt8,
            calibrate_method=CalibrationMethod.MinMax,
        )
        result = onnx.load(str(q))
    del result.metadata_props[:]
    for prop in graph.metadata_props:  # keep what the float file said of itself
        result.metadata_props.add(key=prop.key, value=prop.value)
    result.metadata_props.add(key=INT8_METADATA, value=f"calibration crops: {len(pick)}")
    out.parent.mkdir(parents=True, exist_ok=True)
    with replacing(out) as part:  # in place by default: a killed save keeps the float model
        onnx.save(result, str(part))
    return out


def is_int8(metadata: dict[str, str]) -> bool:
    """Whether a model's metadata marks it as an int8 build of :func:`quantize_classifier`."""
    return INT8_METADATA in metadata


CALIBRATION_PHOTOS = 400
"""Photos drawn from ``--data`` for a die model's calibration crops (all, when fewer)."""


def die_model_crops(
    data: Sequence[str | Path],
    context: float,
    *,
    size: int = 48,
    photos: int = CALIBRATION_PHOTOS,
    seed: int = 0,
    unreadable: list[Path] | None = None,
) -> NDArray[np.uint8]:
    """Calibration crops (N x ``size`` x ``size`` x 3 uint8 BGR) for a die model reading
    ``context`` times a die's side: from ``photos`` photos drawn (``seed``) from the YOLO
    folders ``data``, a crop at each labelled die and one at a random box sized like them.
    A photo drawn that OpenCV cannot read gives no crop; its path is added to ``unreadable``
    (when given) for the caller to say.

    Raises:
        ValueError: no labelled die in ``data``.
    """
    from vision.table.dice import context_crop
    from vision.yolo_dataset import load_labels

    from .crops import iter_yolo_items, read_photo

    items = [image for image, _ in iter_yolo_items(Path(d) for d in data)]
    rng = np.random.default_rng(seed)
    crops: list[NDArray[np.uint8]] = []
    for k in rng.permutation(len(items))[:photos]:
        image = read_photo(items[k], unreadable)
        if image is None:
            continue
        h, w = image.shape[:2]
        dice = load_labels(items[k]).truth(w, h)
        for die in dice:
            crops.append(context_crop(image, die.box, size, context))
        if dice:  # somewhere else in the photo, at a die's size
            side = float(np.median([box_side(d.box) for d in dice]))
            x, y = rng.uniform(0, max(w - side, 1)), rng.uniform(0, max(h - side, 1))
            crops.append(context_crop(image, (x, y, x + side, y + side), size, context))
    if not crops:
        raise ValueError(f"expected labelled dice to calibrate on in {', '.join(map(str, data))}")
    return np.stack(crops)


def quantize_die_model(
    model: str | Path,
    data: Sequence[str | Path],
    *,
    photos: int = CALIBRATION_PHOTOS,
    seed: int = 0,
    log: Callable[[str], Any] = print,
) -> Path:
    """Rebuild the die model ``model`` (``NAME.onnx``, a :class:`~vision.table.dice.ContextDieModel`)
    as int8, in place: exported again from its float weights ``NAME.pt``, with the metadata the
    file carries, and calibrated on :func:`die_model_crops` of ``data``. Run again, it makes the
    same file. Photos drawn that cannot be read are logged (:func:`~.crops.say_unreadable`).

    Raises:
        FileNotFoundError: ``model`` or its ``.pt`` is missing.
        ValueError: no labelled die in ``data``.
    """
    import onnx

    from vision.table.dice import CONTEXT, CROP

    from .classifier import export_classifier, load_classifier
    from .crops import say_unreadable

    model = Path(model)
    weights = model.with_suffix(".pt")
    for path in (model, weights):
        if not path.is_file():
            raise FileNotFoundError(
                f"expected {path}: a die model is rebuilt as int8 from its ONNX file (for its "
                "metadata) and its float weights (.pt)"
            )
    shipped = onnx.load(str(model))
    meta = {p.key: p.value for p in shipped.metadata_props if p.key != INT8_METADATA}
    size = int(shipped.graph.input[0].type.tensor_type.shape.dim[2].dim_value or CROP)
    context = float(meta.get("context", CONTEXT))  # the runtime's default, as for the shipped one
    unreadable: list[Path] = []
    try:
        crops = die_model_crops(
            data, context, size=size, photos=photos, seed=seed, unreadable=unreadable
        )
    finally:  # said even when no die is left to calibrate on
        say_unreadable(unreadable, f"{model.name} calibration", log)
    with tempfile.TemporaryDirectory() as tmp:
        float_file = export_classifier(
            load_classifier(weights), Path(tmp) / "float.onnx", size=size
        )
        exported = onnx.load(str(float_file))
        del exported.metadata_props[:]
        for key, value in meta.items():
            exported.metadata_props.add(key=key, value=value)
        onnx.save(exported, str(float_file))
        return quantize_classifier(float_file, crops, model, seed=seed)


SURFACE_TASK = "dicecam-surface"
"""The ``task`` metadata of an outline model (:mod:`vision.train.surface`)."""


def surface_photos(
    data: Sequence[str | Path],
    size: tuple[int, int],
    *,
    photos: int = CALIBRATION_PHOTOS,
    seed: int = 0,
    unreadable: list[Path] | None = None,
) -> NDArray[np.uint8]:
    """Calibration inputs for an outline model: ``photos`` photos drawn (``seed``) from the
    YOLO folders ``data``, each squeezed whole to ``size`` = (height, width) as
    :class:`vision.table.SurfaceModel` squeezes it (N x h x w x 3 uint8 BGR). A photo drawn
    that OpenCV cannot read is passed over, its path added to ``unreadable`` (when given).

    Raises:
        ValueError: no readable photo in ``data``.
    """
    from vision.table.surface import squeeze

    from .crops import iter_yolo_items, read_photo

    items = [image for image, _ in iter_yolo_items(Path(d) for d in data)]
    rng = np.random.default_rng(seed)
    picked = [read_photo(items[k], unreadable) for k in rng.permutation(len(items))[:photos]]
    squeezed = [squeeze(image, size) for image in picked if image is not None]
    if not squeezed:
        raise ValueError(f"expected photos to calibrate on in {', '.join(map(str, data))}")
    return np.stack(squeezed)


def quantize_surface_model(
    model: str | Path,
    data: Sequence[str | Path],
    out: str | Path | None = None,
    *,
    photos: int = CALIBRATION_PHOTOS,
    seed: int = 0,
    log: Callable[[str], Any] = print,
) -> Path:
    """Quantize the float outline model ``model`` (the ONNX file :mod:`vision.train.surface`
    writes) to int8 into ``out`` (default: in place), calibrated on :func:`surface_photos`
    of ``data``. Run again on the same float file, it makes the same file. Photos drawn that
    cannot be read are logged (:func:`~.crops.say_unreadable`).

    Raises:
        FileNotFoundError: ``model`` is missing.
        ValueError: ``model`` is not a float outline model, or ``data`` holds no photo.
    """
    import onnx

    from .crops import say_unreadable

    model = Path(model)
    if not model.is_file():
        raise FileNotFoundError(f"expected the float outline model {model}")
    try:
        graph = onnx.load(str(model))
    except Exception as exc:  # protobuf's DecodeError, or a file of the wrong kind
        raise ValueError(
            f"expected an ONNX outline model in {model}, cannot read it: {exc}"
        ) from None
    meta = {p.key: p.value for p in graph.metadata_props}
    if meta.get("task") != SURFACE_TASK:
        raise ValueError(
            f"expected an outline model (task {SURFACE_TASK!r}) in {model}, got "
            f"task {meta.get('task')!r}"
        )
    dims = graph.graph.input[0].type.tensor_type.shape.dim
    size = (int(dims[2].dim_value), int(dims[3].dim_value))
    unreadable: list[Path] = []
    try:
        squeezed = surface_photos(data, size, photos=photos, seed=seed, unreadable=unreadable)
    finally:  # said even when no photo is left to calibrate on
        say_unreadable(unreadable, f"{model.name} calibration", log)
    return quantize_classifier(
        model, squeezed, out, samples=len(squeezed), seed=seed, symbolic_shapes=False
    )


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description="Rebuild die models (the die check, the cocked-die and off-table models) as "
        "int8 from their float weights, calibrated on crops of labelled photos; with --surface, "
        "quantize a float outline model calibrated on whole photos."
    )
    p.add_argument(
        "models",
        nargs="+",
        type=Path,
        help="NAME.onnx files, each with NAME.pt (with --surface: one float outline model)",
    )
    p.add_argument("--data", nargs="+", required=True, help="YOLO folders of labelled photos")
    p.add_argument("--photos", type=int, default=CALIBRATION_PHOTOS, help="photos drawn")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--surface",
        type=Path,
        metavar="OUT.onnx",
        help="quantize the float outline model MODEL.onnx into OUT.onnx instead",
    )
    a = p.parse_args(argv)
    if a.surface is not None and len(a.models) != 1:
        p.error(f"expected one outline model with --surface, got {len(a.models)}")
    for model in a.models:
        try:
            if a.surface is not None:
                out = quantize_surface_model(model, a.data, a.surface, photos=a.photos, seed=a.seed)
            else:
                out = quantize_die_model(model, a.data, photos=a.photos, seed=a.seed)
        except (FileNotFoundError, ValueError) as exc:
            p.error(str(exc))
        print(f"{out}: int8, {out.stat().st_size / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
