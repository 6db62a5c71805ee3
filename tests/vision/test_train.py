"""Training smoke tests: the real pipeline (synthetic data -> detector -> face classifier -> ONNX
-> model card -> reader), one epoch on a handful of tiny images, then a fine-tuning run from it."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

if any(importlib.util.find_spec(m) is None for m in ("ultralytics", "torch")):
    pytest.skip("training needs the [train] extra (ultralytics, torch)", allow_module_level=True)

from service.cli import main  # noqa: E402

from dicecam_testing.folders import first_photos, yolo_folder  # noqa: E402

ROBOFLOW = Path(__file__).resolve().parents[3] / "shared" / "datasets" / "roboflow-dice"

RECIPE = """
name: tiny
synth: {n: 10, seed: 3, size: [192, 192], val_fraction: 0.2}
test: {n: 3, seed: 5, size: [192, 192]}
reproduce: ["dicecam train --recipe tiny.yaml"]
real: []
detector:
  model: datasets/recipes/yolo11-dice.yaml
  imgsz: 128
  epochs: 1
  batch: 4
  cache: false
  single_cls: true
  augment: {mosaic: 0.0}
faces: {epochs: 1, batch: 32, jitter: 0}
"""


@pytest.fixture(scope="module", autouse=True)
def few_real_photos(tmp_path_factory) -> Iterator[Path]:
    """Training's real photos cut to a few for every test here: the evaluation on the real eval
    set (the card's, fine-tuning's before and after) reads 8 of its 132 photos, and
    ``finetune_recipe`` replays 40 of the 872 train photos; yields those 40. The same steps run,
    on fewer photos: the two fine-tuning tests took 75 s and 56 s, 18 s and 14 s now."""
    root = tmp_path_factory.mktemp("real")
    with pytest.MonkeyPatch.context() as patch:
        eval_photos = first_photos(ROBOFLOW / "eval", root / "eval", 8)
        patch.setattr("vision.train.run.ROBOFLOW_EVAL", eval_photos)
        yield first_photos(ROBOFLOW / "train", root / "train", 40)


@pytest.fixture(scope="module")
def finetune_recipe(few_real_photos: Path, tmp_path_factory) -> Path:
    """The shipped recipe (what ``--from`` uses by default) with ``few_real_photos`` as its real
    photos and the tiny model's input size, for the fine-tuning runs."""
    import yaml

    from vision.train.recipe import DEFAULT_RECIPE

    recipe = yaml.safe_load(DEFAULT_RECIPE.read_text())
    recipe["real"] = [str(few_real_photos / "images")]
    recipe["detector"]["imgsz"] = 128  # the tiny model's size, not 512: 16 times fewer pixels
    path = tmp_path_factory.mktemp("recipe") / "dicecam-reader.yaml"
    path.write_text(yaml.safe_dump(recipe))
    return path


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("train")
    recipe = root / "recipe.yaml"
    (root / "card-extra.md").write_text("## Speed\nHand-measured: 1.5 ms.\n")
    (root / "card-overview.md").write_text("## At a glance\nA tiny model.\n")
    recipe.write_text(
        RECIPE
        + f"card_extra: {root / 'card-extra.md'}\ncard_overview: {root / 'card-overview.md'}\n"
    )
    out = root / "models"
    code = main(["train", "--recipe", str(recipe), "--work", str(root / "work"), "--out", str(out)])
    assert code == 0
    return out


@pytest.mark.slow
def test_one_epoch_training_ships_models_the_reader_loads(trained: Path, tmp_path: Path):
    from vision import DiceReader
    from vision.faces import FaceClassifier

    detector, faces, card = trained / "tiny.onnx", trained / "tiny-faces.onnx", trained / "tiny.md"
    for path in (detector, faces, card, trained / "tiny.pt", trained / "tiny-faces.pt"):
        assert path.is_file(), f"{path.name} was not written"
    text = card.read_text()
    assert "## Reproduce" in text and "dicecam train" in text and "CC BY 4.0" in text
    figures = json.loads(card.with_suffix(".json").read_text())["evaluations"]
    assert figures["synthetic val"]["images"] == 2  # 20% of 10 rendered images
    assert figures["synthetic test (seed 5, held out)"]["images"] == 3
    assert "dicecam train --recipe tiny.yaml" in text  # the recipe's reproduce commands
    assert text.endswith("## Speed\nHand-measured: 1.5 ms.\n")  # the recipe's card_extra
    assert text.index("## At a glance\nA tiny model.") < text.index("## Data")  # card_overview

    reader = DiceReader(detector, conf=0.0)
    assert reader.imgsz == (128, 128)
    assert reader.dice_only and reader.faces is not None  # one class: the classifier reads faces
    image = np.full((120, 160, 3), 200, np.uint8)
    reading = reader.read(image)
    assert (reading.width, reading.height) == (160, 120)
    for die in reading.dice:
        assert 1 <= die.value <= 6
        x1, y1, x2, y2 = die.box
        assert 0 <= x1 <= x2 <= 160 and 0 <= y1 <= y2 <= 120

    values, cocked, probs = FaceClassifier(faces).classify(
        np.zeros((64, 64, 3), np.uint8), np.array([[8, 8, 40, 40]], np.float32)
    )
    assert probs.shape == (1, 7) and abs(float(probs.sum()) - 1) < 1e-4
    assert 1 <= int(values[0]) <= 6


@pytest.mark.slow
def test_finetune_from_the_shipped_checkpoint(
    trained: Path, finetune_recipe: Path, tmp_path: Path, capsys
):
    from vision import DiceReader
    from vision.synth import write_dataset

    new_dice = tmp_path / "new-dice"
    write_dataset(new_dice, 10, seed=11, size=(192, 192), val_fraction=0.0)
    out = tmp_path / "ft"
    code = main(
        [
            "train",
            "--recipe",
            str(finetune_recipe),
            "--from",
            str(trained / "tiny.onnx"),
            "--data",
            str(new_dice),
            "--epochs",
            "1",
            "--faces-epochs",
            "1",
            "--work",
            str(tmp_path / "work"),
            "--out",
            str(out),
            "--synth",
            "0",
            "--holdout",
            "0.3",
            "--replay",  # the known photos trained again (300 by default: 2.5 min of the run)
            "20",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "held out" in printed and "fine-tuning took" in printed
    assert (out / "tiny-ft.onnx").is_file() and (out / "tiny-ft-faces.onnx").is_file()
    card = json.loads((out / "tiny-ft.json").read_text())["evaluations"]
    before, after = card["before, held-out (new dice)"], card["after, held-out (new dice)"]
    assert before["images"] == after["images"] > 0
    assert DiceReader(out / "tiny-ft.onnx").dice_only  # a one-class detector stays one class
    # --detector auto: the fine-tuned detector stays only if it read the held-out photos better
    (line,) = [ln for ln in printed.splitlines() if ln.startswith("detector: ")]
    same = (out / "tiny-ft.onnx").read_bytes() == (trained / "tiny.onnx").read_bytes()
    assert same == ("starting one, kept" in line), line
    assert line.removeprefix("detector: ") in (out / "tiny-ft.md").read_text()


@pytest.mark.slow
def test_finetune_can_keep_the_detector_and_tune_faces_only(
    trained: Path, finetune_recipe: Path, tmp_path: Path, capsys
):
    from vision.synth import write_dataset

    new_dice = tmp_path / "new-dice"
    write_dataset(new_dice, 6, seed=12, size=(192, 192), val_fraction=0.0)
    out = tmp_path / "ft"
    args = ["train", "--recipe", str(finetune_recipe), "--from", str(trained / "tiny.onnx")]
    args += ["--data", str(new_dice)]
    args += ["--faces-epochs", "1", "--work", str(tmp_path / "work"), "--out", str(out)]
    assert main([*args, "--detector", "keep", "--synth", "0", "--holdout", "0.3"]) == 0
    assert "detector: the starting detector (--detector keep)" in capsys.readouterr().out
    assert (out / "tiny-ft.onnx").read_bytes() == (trained / "tiny.onnx").read_bytes()
    assert (out / "tiny-ft.pt").read_bytes() == (trained / "tiny.pt").read_bytes()
    faces = (out / "tiny-ft-faces.pt").read_bytes()
    assert faces != (trained / "tiny-faces.pt").read_bytes()  # the classifier did learn


def test_train_rejects_bad_arguments(tmp_path: Path, capsys):
    assert main(["train", "--recipe", str(tmp_path / "missing.yaml")]) == 2
    assert "recipe not found" in capsys.readouterr().err
    lost = tmp_path / "lost.yaml"
    lost.write_text(f"card_extra: {tmp_path / 'nowhere.md'}\n")
    assert main(["train", "--recipe", str(lost), "--stage", "card"]) == 2
    assert "card_extra file is missing: " in capsys.readouterr().err
    lost.write_text(f"card_overview: {tmp_path / 'nowhere.md'}\n")
    assert main(["train", "--recipe", str(lost), "--stage", "card"]) == 2
    assert "card_overview file is missing: " in capsys.readouterr().err
    assert main(["train", "--from", str(tmp_path / "m.onnx")]) == 2
    assert "--data" in capsys.readouterr().err
    assert main(["train", "--data", str(tmp_path / "nope")]) == 2
    assert "not a folder" in capsys.readouterr().err
    # a bad label line is named before any training starts
    data = yolo_folder(tmp_path / "data", ["a", "b"])
    (data / "labels" / "b.txt").write_text("0 0.5 0.5 0.1 0.1\n2 0.5 nan 0.1 0.1\n")
    assert main(["train", "--data", str(data), "--from", str(tmp_path / "m.onnx")]) == 2
    assert "b.txt:2: expected finite numbers" in capsys.readouterr().err
    (data / "labels" / "b.txt").write_text("9 0.5 0.5 0.1 0.1\n")
    assert main(["train", "--data", str(data)]) == 2
    said = capsys.readouterr().err  # the photo, its label file and the die
    assert "b.txt: die 1: expected label classes 0-5 (faces 1-6) or 6 (cocked), got class 9" in said
    # a photo training cannot read (an iPhone's HEIC, which dicecam read takes) is named too
    (data / "labels" / "b.txt").write_text("0 0.5 0.5 0.1 0.1\n")
    (data / "images" / "b.jpg").rename(data / "images" / "b.heic")
    assert main(["train", "--data", str(data), "--from", str(tmp_path / "m.onnx")]) == 2
    assert "b.heic: training reads JPEG, PNG, BMP, WebP or TIFF photos, got .heic" in (
        capsys.readouterr().err
    )
    # a --from model that is not there is said in one line, before any training
    good = yolo_folder(tmp_path / "good", ["a", "b"])
    assert main(["train", "--data", str(good), "--from", str(tmp_path / "m")]) == 2
    assert f"--from needs {tmp_path / 'm.onnx'} (the exported model and its checkpoint)" in (
        capsys.readouterr().err
    )
    assert main(["train", "--from", str(tmp_path / "m.onnx"), "--replay", "-1"]) == 2
    assert "--replay must be 0 or more photos, got -1" in capsys.readouterr().err
    assert main(["train", "--from", str(tmp_path / "m.onnx"), "--freeze", "40"]) == 2
    assert "--freeze must be 0 to 22 layers, got 40" in capsys.readouterr().err
    assert main(["train", "--from", str(tmp_path / "m.onnx"), "--holdout", "1.5"]) == 2
    assert "--holdout is a share above 0 and under 1, got 1.5" in capsys.readouterr().err
    # fine-tuning's options without --from would train a whole new model into models/
    assert main(["train", "--data", str(good), "--holdout", "0.3", "--replay", "9"]) == 2
    assert "--holdout, --replay go with --from" in capsys.readouterr().err
    assert main(["train", "--faces-epochs", "0"]) == 2
    assert "--faces-epochs must be at least 1, got 0" in capsys.readouterr().err
    # too few labelled photos to hold any out: one line, not a traceback
    one = yolo_folder(tmp_path / "one", ["a"])
    shipped = Path(__file__).resolve().parents[2] / "models" / "dicecam-reader.onnx"
    argv = ["train", "--from", str(shipped), "--data", str(one), "--work", str(tmp_path / "w")]
    assert main(argv) == 2
    assert "--data: expected at least 2 labelled photos (images/ with labels/" in (
        capsys.readouterr().err
    )
    ckpt = tmp_path / "a.pt"
    ckpt.write_bytes(b"not a checkpoint")
    assert main(["train", "--soup", str(ckpt)]) == 2
    assert "--soup needs at least 2 checkpoints, got 1" in capsys.readouterr().err
    assert main(["train", "--soup", str(ckpt), "--soup", str(tmp_path / "b.pt")]) == 2
    assert f"--soup must name detector checkpoints (.pt files), got {tmp_path / 'b.pt'}" in (
        capsys.readouterr().err
    )
    assert main(["train", "--soup", str(ckpt), "--soup", str(ckpt), "--init", str(ckpt)]) == 2
    assert "--soup averages finished detectors" in capsys.readouterr().err
    assert main(["train", "--soup", str(ckpt), "--soup", str(ckpt), "--stage", "card"]) == 2
    assert "it goes with --stage detector or all, got --stage card" in capsys.readouterr().err


@pytest.mark.slow
def test_int8_stage_quantizes_the_float_classifier_again(trained: Path, tmp_path: Path, capsys):
    import shutil

    from vision.faces import FaceClassifier
    from vision.train.quantize import is_int8

    recipe, work = trained.parent / "recipe.yaml", trained.parent / "work"
    args = ["train", "--recipe", str(recipe), "--work", str(work), "--stage", "int8"]
    assert main([*args, "--out", str(tmp_path / "empty")]) == 2
    err = capsys.readouterr().err
    assert f"float weights at {tmp_path / 'empty' / 'tiny-faces.pt'}" in err
    out = tmp_path / "models"
    out.mkdir()
    shutil.copyfile(trained / "tiny-faces.pt", out / "tiny-faces.pt")
    assert main([*args, "--out", str(out)]) == 0
    assert "int8, calibrated on" in capsys.readouterr().out
    rebuilt, trained_faces = (
        FaceClassifier(out / "tiny-faces.onnx"),
        FaceClassifier(trained / "tiny-faces.onnx"),
    )
    assert is_int8(rebuilt._model.metadata) and is_int8(trained_faces._model.metadata)
    # the same float weights, each build calibrated on a sample of the training crops: close
    rgb = np.random.default_rng(1).integers(0, 255, (96, 96, 3), dtype=np.uint8)
    boxes = np.array([[8, 8, 40, 40], [50, 50, 90, 90]], np.float32)
    a, b = (m.classify(rgb, boxes)[2] for m in (rebuilt, trained_faces))
    assert np.abs(a - b).max() < 0.2


@pytest.mark.slow
def test_a_soup_of_detectors_ships_the_mean_of_their_weights(trained: Path, tmp_path: Path):
    import onnxruntime as ort
    import torch

    recipe = str(trained.parent / "recipe.yaml")
    start = trained / "tiny.pt"
    shifted = torch.load(start, map_location="cpu", weights_only=False)
    with torch.no_grad():  # the same network, every weight 1 higher
        for tensor in shifted["model"].state_dict().values():
            if tensor.is_floating_point():
                tensor.add_(1.0)
    torch.save(shifted, tmp_path / "shifted.pt")

    def soup(*parts: Path) -> Path:
        out = tmp_path / f"soup{len(parts)}"
        args = ["train", "--recipe", recipe, "--stage", "detector", "--out", str(out)]
        args += ["--work", str(tmp_path / "work")]
        for part in parts:
            args += ["--soup", str(part)]
        assert main(args) == 0
        return out

    # the start with the shifted one listed twice: every weight 2/3 higher
    weighted = soup(start, tmp_path / "shifted.pt", tmp_path / "shifted.pt")
    mean = torch.load(weighted / "tiny.pt", map_location="cpu", weights_only=False)["model"]
    first = torch.load(start, map_location="cpu", weights_only=False)["model"].state_dict()
    for key, tensor in mean.state_dict().items():
        if tensor.is_floating_point():
            expected = first[key].float() + 2 / 3
            assert torch.allclose(tensor.float(), expected, atol=2e-2), key
    # a soup of one detector with itself reads as that detector does
    same = soup(start, start)
    blob = np.random.default_rng(0).random((1, 3, 128, 128), dtype=np.float32)

    def run(path: Path) -> np.ndarray:
        session = ort.InferenceSession(str(path))
        return session.run(None, {session.get_inputs()[0].name: blob})[0]

    assert np.allclose(run(same / "tiny.onnx"), run(trained / "tiny.onnx"), atol=1e-4)
    assert not np.allclose(run(weighted / "tiny.onnx"), run(trained / "tiny.onnx"), atol=1e-2)
