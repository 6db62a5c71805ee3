"""What :func:`vision.train.detector.train_detector` asks of ultralytics, read back from the
``args.yaml`` a real (one epoch, 64 px, four photos) training run leaves: the data.yaml by its
full path, one class when asked, no loader processes on the CPU, the time budget, the seed, the
size, augmentation; and the weights it returns."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest

if any(importlib.util.find_spec(m) is None for m in ("ultralytics", "torch")):
    pytest.skip("training needs the [train] extra (ultralytics, torch)", allow_module_level=True)


def _dataset(root: Path) -> Path:
    """Four 64 px photos of a white square (two classes) and a data.yaml naming them."""
    import cv2

    for split in ("train", "val"):
        (root / "images" / split).mkdir(parents=True)
        (root / "labels" / split).mkdir(parents=True)
        for i in range(2):
            image = np.full((64, 64, 3), 60, np.uint8)
            image[20:40, 10 + 10 * i : 30 + 10 * i] = 230
            cv2.imwrite(str(root / "images" / split / f"{i}.jpg"), image)
            cx = (20 + 10 * i) / 64
            (root / "labels" / split / f"{i}.txt").write_text(
                f"{i} {cx:.4f} 0.4688 0.3125 0.3125\n"
            )
    data = root / "data.yaml"
    data.write_text(f"path: {root}\ntrain: images/train\nval: images/val\nnames: [one, two]\n")
    return data


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One real training run from the shipped architecture, its data.yaml given relative to the
    working folder (ultralytics would look for it in its own datasets folder)."""
    import yaml

    from vision.train.detector import train_detector

    root = tmp_path_factory.mktemp("detector")
    data = _dataset(root / "data")
    out = root / "out"
    here = Path.cwd()
    os.chdir(root)
    try:
        final = train_detector(
            Path("data") / data.name,
            Path("out"),
            model="yolo11n.yaml",
            imgsz=64,
            epochs=1,
            batch=2,
            seed=7,
            time_hours=0.5,
            single_cls=True,
            augment={"mosaic": 0.0, "fliplr": 0.25},
        )
    finally:
        os.chdir(here)
    args = yaml.safe_load((out / "train" / "args.yaml").read_text())
    return final, out, data, args


def test_the_run_gets_the_data_yaml_by_its_full_path_and_the_settings_asked(run):
    final, out, data, args = run
    assert args["data"] == str(data.resolve())
    assert args["project"] == str(out.resolve()) and args["name"] == "train"
    assert args["single_cls"] is True  # a die, whatever its face
    assert args["workers"] == 0 and args["device"] == "cpu"
    assert args["time"] == 0.5 and args["epochs"] == 1
    assert (args["seed"], args["imgsz"], args["batch"]) == (7, 64, 2)
    assert args["mosaic"] == 0.0 and args["fliplr"] == 0.25
    assert args["val"] is False and args["pretrained"] is False  # built from scratch
    assert args["freeze"] is None


def test_the_best_weights_are_returned_and_load_as_a_one_class_detector(run):
    import torch

    final, out, _, _ = run
    assert final == (out / "train" / "weights" / "best.pt").resolve()
    checkpoint = torch.load(final, map_location="cpu", weights_only=False)
    assert checkpoint["model"].nc == 1


def test_the_export_has_free_batch_height_and_width_no_nms_inside_and_its_size(run, tmp_path):
    import onnx
    import onnxruntime as ort

    from vision.train.detector import export_onnx

    final, _, _, _ = run
    before = final.read_bytes()
    out = export_onnx(final, tmp_path / "models" / "d.onnx", imgsz=64)
    assert out == tmp_path / "models" / "d.onnx" and final.read_bytes() == before
    assert not final.with_suffix(".onnx").exists()  # nothing written beside the weights
    model = onnx.load(str(out))
    (image,) = model.graph.input
    dims = [d.dim_param or d.dim_value for d in image.type.tensor_type.shape.dim]
    assert dims[1] == 3 and all(isinstance(d, str) for d in (dims[0], dims[2], dims[3]))
    meta = {e.key: e.value for e in model.metadata_props}
    assert meta["imgsz"] == "[64, 64]"
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    (y,) = session.run(None, {image.name: np.zeros((2, 3, 64, 96), np.float32)})
    # raw boxes and class scores for every anchor (4 + 1 class), not NMS's kept boxes
    assert y.shape == (2, 5, (64 * 96) // 64 + (64 * 96) // 256 + (64 * 96) // 1024)
