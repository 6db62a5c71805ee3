"""What an int8 build holds: unsigned 8-bit weights per output channel ("U8U8"), the input's
range from the calibration crops as the model reads them (0..1), float input and output, the
float file's metadata and how many crops calibrated it; crops it cannot read refused; a die
model's calibration crops (each labelled die and a box of a die's size per photo, at the
model's own context)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

if any(importlib.util.find_spec(m) is None for m in ("torch", "onnx")):
    pytest.skip("quantizing needs the [train] extra (torch, onnx)", allow_module_level=True)

import onnx  # noqa: E402
from onnx import numpy_helper  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def float_file(tmp_path_factory) -> Path:
    """A tiny untrained classifier's float export, with a metadata entry of its own."""
    import torch

    from vision.train.classifier import FaceNet, export_classifier

    torch.manual_seed(0)
    out = export_classifier(FaceNet(0.25).eval(), tmp_path_factory.mktemp("q") / "float.onnx")
    graph = onnx.load(str(out))
    graph.metadata_props.add(key="task", value="faces-test")
    onnx.save(graph, str(out))
    return out


def _crops(n: int, high: int = 256, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, high, (n, 48, 48, 3), dtype=np.uint8)


def test_int8_weights_are_unsigned_per_output_channel_and_the_ends_stay_float(
    float_file: Path, tmp_path: Path
):
    from vision.train.quantize import quantize_classifier

    out = quantize_classifier(float_file, _crops(40), tmp_path / "int8.onnx")
    graph = onnx.load(str(out))
    init = {t.name: t for t in graph.graph.initializer}
    weights = [
        n for n in graph.graph.node if n.op_type == "DequantizeLinear" and n.input[0] in init
    ]
    conv = [n for n in weights if len(init[n.input[0]].dims) == 4]
    assert len(conv) == 7  # every convolution's weights
    for node in conv:
        w, scale = init[node.input[0]], numpy_helper.to_array(init[node.input[1]])
        assert w.data_type == onnx.TensorProto.UINT8, (node.input[0], w.data_type)
        assert scale.shape == (w.dims[0],)  # one scale per output channel
    float_type = onnx.TensorProto.FLOAT
    assert graph.graph.input[0].type.tensor_type.elem_type == float_type
    assert graph.graph.output[0].type.tensor_type.elem_type == float_type


def test_the_input_range_is_the_calibration_crops_read_as_0_to_1(float_file: Path, tmp_path: Path):
    from vision.train.quantize import quantize_classifier

    out = quantize_classifier(float_file, _crops(40, high=128), tmp_path / "dark.onnx")
    graph = onnx.load(str(out))
    init = {t.name: numpy_helper.to_array(t) for t in graph.graph.initializer}
    (first,) = [
        n for n in graph.graph.node if n.op_type == "QuantizeLinear" and n.input[0] == "images"
    ]
    scale, zero = float(init[first.input[1]]), int(init[first.input[2]])
    assert zero == 0 and scale == pytest.approx(127 / 255 / 255, rel=0.02)  # 0..127 of 255


def test_the_build_keeps_the_float_files_metadata_and_counts_its_calibration_crops(
    float_file: Path, tmp_path: Path
):
    from vision.runtime import SmallModel
    from vision.train.quantize import quantize_classifier

    out = quantize_classifier(float_file, _crops(40), tmp_path / "a.onnx", samples=10)
    assert SmallModel(out).metadata == {"task": "faces-test", "int8": "calibration crops: 10"}
    out = quantize_classifier(float_file, _crops(12), tmp_path / "b.onnx")
    assert SmallModel(out).metadata["int8"] == "calibration crops: 12"  # all, when fewer


@pytest.mark.parametrize(
    "shape", [(5, 48, 48, 1), (5, 48, 48, 4), (48, 48, 3), (5, 48, 32, 3)], ids=str
)
def test_crops_the_model_cannot_read_are_refused_naming_what_came(
    float_file: Path, tmp_path: Path, shape: tuple[int, ...]
):
    from vision.train.quantize import quantize_classifier

    got = str(shape).replace("(", r"\(").replace(")", r"\)")
    with pytest.raises(ValueError, match=rf"expected calibration crops N x 48 x 48 x 3.*{got}"):
        quantize_classifier(float_file, np.zeros(shape, np.uint8), tmp_path / "x.onnx")
    assert not (tmp_path / "x.onnx").exists()


@pytest.fixture(scope="module")
def photos(tmp_path_factory) -> Path:
    from vision.synth import write_dataset

    root = tmp_path_factory.mktemp("calib") / "set"
    write_dataset(root, 4, seed=44, size=(200, 160), val_fraction=0.0)
    return root


def _dice_per_photo(root: Path) -> list[int]:
    from vision.train.crops import iter_yolo_items
    from vision.yolo_dataset import load_labels

    return [len(load_labels(image).truth(200, 160)) for image, _ in iter_yolo_items([root])]


def test_a_die_models_calibration_crops_are_its_dice_and_a_box_per_photo(photos: Path):
    from vision.train.quantize import die_model_crops

    dice = _dice_per_photo(photos)
    assert len(dice) == 4 and all(dice)
    every = die_model_crops([photos], 1.5)
    assert every.shape == (sum(dice) + 4, 48, 48, 3)
    one = die_model_crops([photos], 1.5, photos=1, size=32)
    assert one.shape[1:] == (32, 32, 3) and len(one) - 1 in dice


def test_a_die_model_is_calibrated_at_the_context_its_file_names(
    photos: Path, tmp_path: Path, monkeypatch
):
    import vision.train.quantize as quantize

    models = Path(__file__).resolve().parents[2] / "models"
    for suffix in (".onnx", ".pt"):
        name = f"dicecam-reader-cocked{suffix}"
        (tmp_path / name).write_bytes((models / name).read_bytes())
    contexts: list[float] = []
    real = quantize.die_model_crops

    def watched(data, context, **kw):
        contexts.append(context)
        return real(data, context, **kw)

    monkeypatch.setattr(quantize, "die_model_crops", watched)
    quantize.quantize_die_model(tmp_path / "dicecam-reader-cocked.onnx", [photos], photos=2)
    assert contexts == [2.0]  # the cocked-die model's, not the runtime's default of 4


def test_calibration_reads_each_crop_and_its_mirror_image(float_file: Path, tmp_path: Path):
    from vision.train.quantize import quantize_classifier

    crops = _crops(20, seed=1)
    once = quantize_classifier(float_file, crops, tmp_path / "once.onnx")
    mirrored = np.concatenate([crops, crops[:, :, ::-1]])
    both = quantize_classifier(float_file, mirrored, tmp_path / "both.onnx")

    def ranges(path: Path) -> dict[str, np.ndarray]:
        graph = onnx.load(str(path)).graph
        return {t.name: numpy_helper.to_array(t) for t in graph.initializer}

    a, b = ranges(once), ranges(both)
    assert a.keys() == b.keys()
    for name in a:  # the same crops seen: the same ranges, to the last bit
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def test_an_outline_build_refuses_a_model_of_another_task(float_file: Path, photos: Path):
    from vision.train.quantize import quantize_surface_model

    with pytest.raises(ValueError, match=r"outline model \(task 'dicecam-surface'\).*'faces-test'"):
        quantize_surface_model(float_file, [photos], float_file.with_name("s.onnx"))
    assert not float_file.with_name("s.onnx").exists()
