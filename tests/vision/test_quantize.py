"""The int8 face classifier: built from the float export, and reading the dice as the float
one does."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

if any(importlib.util.find_spec(m) is None for m in ("torch", "onnx")):
    pytest.skip("quantizing needs the [train] extra (torch, onnx)", allow_module_level=True)

from vision.faces import FaceClassifier  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> tuple[Path, np.ndarray, np.ndarray]:
    """A small classifier trained for a few epochs on synthetic crops, its float export, and
    held-out crops (BGR, as load_crops gives them) with their classes."""
    from vision.synth import write_dataset
    from vision.train.classifier import export_classifier, train_classifier
    from vision.train.crops import load_crops

    root = tmp_path_factory.mktemp("q")
    write_dataset(root / "a", 24, seed=41, size=(320, 240), val_fraction=0.0)
    write_dataset(root / "b", 8, seed=42, size=(320, 240), val_fraction=0.0)
    x, y = load_crops([root / "a" / "images"], jitter=1)
    model = train_classifier(x, y, epochs=4, batch=64, lr=3e-3, width=0.5, log=lambda s: None)
    onnx_file = export_classifier(model, root / "float.onnx")
    hx, hy = load_crops([root / "b" / "images"], jitter=0)
    return onnx_file, hx, hy


def _read(model: Path, crops: np.ndarray) -> np.ndarray:
    """Class probabilities of BGR ``crops`` (each a whole 48 px image: the box is the crop)."""
    classifier = FaceClassifier(model)
    crops = np.ascontiguousarray(crops[..., ::-1])  # the reader reads RGB photos
    s = crops.shape[1]
    m = 0.15 * s / (1 + 2 * 0.15)  # the classifier grows the box by its margin: undo it
    box = np.array([[m, m, s - m, s - m]], np.float32)
    return np.concatenate([classifier.classify(c, box)[2] for c in crops])


def test_int8_classifier_reads_as_the_float_one(trained, tmp_path: Path):
    from vision.train.quantize import is_int8, quantize_classifier

    float_file, crops, classes = trained
    out = quantize_classifier(float_file, crops, tmp_path / "int8.onnx")
    int8 = FaceClassifier(out)
    assert is_int8(int8._model.metadata) and not is_int8(FaceClassifier(float_file)._model.metadata)
    assert out.stat().st_size < float_file.stat().st_size  # int8 weights: a smaller file
    p_float, p_int8 = (_read(m, crops) for m in (float_file, out))
    assert not np.array_equal(p_float, p_int8)  # it is another model...
    agree = (p_float.argmax(1) == p_int8.argmax(1)).mean()
    assert agree >= 0.95, f"the int8 build reads {agree:.1%} of the crops as the float one"
    assert np.abs(p_float - p_int8).max() < 0.25  # ...whose probabilities stay close


def test_quantizing_checks_its_inputs(trained, tmp_path: Path):
    from vision.train.quantize import quantize_classifier

    float_file, crops, _ = trained
    with pytest.raises(
        ValueError, match=r"expected calibration crops N x 48 x 48 x 3.*\(5, 32, 32, 3\)"
    ):
        quantize_classifier(float_file, np.zeros((5, 32, 32, 3), np.uint8), tmp_path / "x.onnx")
    with pytest.raises(ValueError, match="got \\(0, 48, 48, 3\\)"):
        quantize_classifier(float_file, crops[:0], tmp_path / "x.onnx")
    once = quantize_classifier(float_file, crops[:32], tmp_path / "once.onnx")
    with pytest.raises(ValueError, match="already quantized"):
        quantize_classifier(once, crops[:32], tmp_path / "twice.onnx")
    assert not (tmp_path / "twice.onnx").exists()


def test_the_shipped_classifier_is_int8_and_its_float_weights_stay():
    from vision.train.quantize import is_int8

    models = Path(__file__).resolve().parents[2] / "models"
    shipped = FaceClassifier(models / "dicecam-reader-faces.onnx")
    assert is_int8(shipped._model.metadata)
    import torch

    saved = torch.load(models / "dicecam-reader-faces.pt", weights_only=False)
    weights = [v for member in saved["members"] for v in member["state_dict"].values()]
    assert all(w.dtype in (torch.float32, torch.int64) for w in weights)


DIE_MODELS = ("dicecam-reader-verify", "dicecam-reader-cocked", "dicecam-offtable")


@pytest.fixture(scope="module")
def photos(tmp_path_factory) -> Path:
    """A few labelled synthetic photos to calibrate die models on (a YOLO folder)."""
    from vision.synth import write_dataset

    root = tmp_path_factory.mktemp("calib") / "set"
    write_dataset(root, 10, seed=43, size=(320, 240), val_fraction=0.0)
    return root


@pytest.mark.parametrize("name", DIE_MODELS)
def test_a_die_model_rebuilt_as_int8_keeps_its_metadata_and_reads_as_the_float_one(
    name: str, photos: Path, tmp_path: Path
):
    from vision.table.dice import ContextDieModel
    from vision.train.quantize import die_model_crops, is_int8, quantize_die_model

    models = Path(__file__).resolve().parents[2] / "models"
    for suffix in (".onnx", ".pt"):
        (tmp_path / f"{name}{suffix}").write_bytes((models / f"{name}{suffix}").read_bytes())
    onnx_file = tmp_path / f"{name}.onnx"
    shipped = ContextDieModel(models / f"{name}.onnx")
    out = quantize_die_model(onnx_file, [photos])
    assert out == onnx_file
    first = out.read_bytes()
    assert quantize_die_model(onnx_file, [photos]).read_bytes() == first  # the same file again
    int8 = ContextDieModel(out)
    assert is_int8(int8.metadata)
    kept = {k: v for k, v in shipped.metadata.items() if k != "int8"}
    assert {k: v for k, v in int8.metadata.items() if k != "int8"} == kept
    assert (int8.context, int8.tta, int8.threshold) == (
        shipped.context,
        shipped.tta,
        shipped.threshold,
    )
    # the float export of its weights, against the int8 build, on crops it was not calibrated on
    from vision.runtime import SmallModel, softmax
    from vision.train.classifier import export_classifier, load_classifier

    float_file = export_classifier(load_classifier(tmp_path / f"{name}.pt"), tmp_path / "f.onnx")
    crops = die_model_crops([photos], int8.context, seed=1)[..., ::-1]
    blob = np.ascontiguousarray(crops.transpose(0, 3, 1, 2), np.float32) / 255
    p_float = softmax(SmallModel(float_file).run(blob))[:, 1]
    p_int8 = softmax(int8._model.run(blob))[:, 1]
    assert not np.array_equal(p_float, p_int8)
    assert np.abs(p_float - p_int8).max() < 0.15, np.abs(p_float - p_int8).max()


def test_rebuilding_a_die_model_names_what_is_missing(photos: Path, tmp_path: Path):
    from vision.train.quantize import main, quantize_die_model

    models = Path(__file__).resolve().parents[2] / "models"
    onnx_file = tmp_path / "m.onnx"
    onnx_file.write_bytes((models / "dicecam-offtable.onnx").read_bytes())
    with pytest.raises(FileNotFoundError, match=r"m\.pt"):
        quantize_die_model(onnx_file, [photos])
    (tmp_path / "m.pt").write_bytes((models / "dicecam-offtable.pt").read_bytes())
    empty = tmp_path / "empty"
    (empty / "images").mkdir(parents=True)
    with pytest.raises(ValueError, match="expected labelled dice to calibrate on"):
        quantize_die_model(onnx_file, [empty])
    with pytest.raises(SystemExit):  # the command line says it in one line
        main([str(onnx_file), "--data", str(empty)])


@pytest.mark.parametrize("name", DIE_MODELS)
def test_the_shipped_die_models_are_int8_and_their_float_weights_stay(name: str):
    import torch

    from vision.table.dice import ContextDieModel
    from vision.train.quantize import is_int8

    models = Path(__file__).resolve().parents[2] / "models"
    assert is_int8(ContextDieModel(models / f"{name}.onnx").metadata)
    saved = torch.load(models / f"{name}.pt", weights_only=False)
    state = saved.get("state_dict", saved)
    assert all(w.dtype in (torch.float32, torch.int64) for w in state.values())
