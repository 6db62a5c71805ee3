"""A labelled photo OpenCV cannot read leaves its dice out of a die model's training or
calibration: each trainer says how many and which (three named), as the face classifier's does,
where it passed over them without a word."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

if any(importlib.util.find_spec(m) is None for m in ("torch", "onnx")):
    pytest.skip("training needs the [train] extra (torch, onnx)", allow_module_level=True)

from vision.synth import write_dataset  # noqa: E402

from dicecam_testing.die_check import starting_reader  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

MODELS = Path(__file__).resolve().parents[2] / "models"


@pytest.fixture(scope="module")
def rolls(tmp_path_factory) -> Path:
    """A `dicecam synth` folder of 6 photos, 2 in val."""
    root = tmp_path_factory.mktemp("unreadable") / "rolls"
    write_dataset(root, 6, seed=3, size=(320, 240), val_fraction=0.34)
    return root


def _break(photo: Path) -> Path:
    photo.write_bytes(b"not a jpeg")
    return photo


def _copy_with_broken(rolls: Path, to: Path, n: int = 1) -> tuple[Path, list[Path]]:
    """``rolls`` copied to ``to`` with the first ``n`` train photos made unreadable."""
    shutil.copytree(rolls, to)
    broken = [_break(p) for p in sorted((to / "images" / "train").glob("*.jpg"))[:n]]
    return to, broken


def _said(lines: list[str]) -> list[str]:
    return [line for line in lines if "not readable" in line]


def test_the_die_checks_trainer_names_the_photos_it_could_not_mine(rolls: Path, tmp_path: Path):
    from vision.train.mining import is_val_scene
    from vision.train.verify import train_verifier

    synth, (synth_broken,) = _copy_with_broken(rolls, tmp_path / "synth")
    real = tmp_path / "real"
    shutil.copytree(rolls / "images" / "train", real / "images")
    shutil.copytree(rolls / "labels" / "train", real / "labels")
    train_photos = sorted(p for p in (real / "images").glob("*.jpg") if not is_val_scene(p.stem))
    real_broken = _break(train_photos[-1])
    lines: list[str] = []
    figures = train_verifier(
        [synth],
        tmp_path / "v.onnx",
        real=[real / "images"],
        epochs=1,
        background=3,
        log=lines.append,
    )
    assert figures["train_boxes"] > 0  # the readable photos still train it
    assert _said(lines) == [
        f"die check: 2 labelled photos not readable, left out: {synth_broken}, {real_broken}"
    ]


def test_the_die_checks_calibration_names_the_photos_it_could_not_read(rolls: Path, tmp_path: Path):
    from vision.train.verify import calibrate_verifier

    base = starting_reader(tmp_path / "base")
    new, (broken,) = _copy_with_broken(rolls, tmp_path / "new")
    lines: list[str] = []
    figures = calibrate_verifier(base, [new / "images"], tmp_path / "v.onnx", log=lines.append)
    assert figures is not None and figures["dice"] > 0
    assert _said(lines) == [f"die check: 1 labelled photo not readable, left out: {broken}"]


@pytest.mark.parametrize(
    ("trainer", "what"),
    [("offtable.train_offtable", "off-table"), ("cocked.train_cocked", "cocked")],
)
def test_the_context_die_models_trainers_name_three_and_count_the_rest(
    rolls: Path, tmp_path: Path, trainer: str, what: str
):
    import importlib

    module, name = trainer.split(".")
    train = getattr(importlib.import_module(f"vision.train.{module}"), name)
    synth, broken = _copy_with_broken(rolls, tmp_path / "synth", n=4)
    lines: list[str] = []
    with pytest.raises(ValueError, match="expected dice both"):  # the 4 photos left hold too few
        train([synth], tmp_path / "m.onnx", epochs=1, log=lines.append)
    names = ", ".join(map(str, broken[:3]))
    assert _said(lines) == [
        f"{what} model: 4 labelled photos not readable, left out: {names} (and 1 more)"
    ]


def test_the_context_die_models_trainer_says_one_it_could_not_read_and_trains_on(tmp_path: Path):
    from vision.train.offtable import train_offtable

    # seed 7 from index 150: index 151 has two dice on the floor beside the table; 150 is broken
    synth = tmp_path / "synth"
    write_dataset(synth, 4, seed=7, start=150, size=(320, 240), val_fraction=0.0)
    broken = _break(sorted((synth / "images" / "train").glob("*.jpg"))[0])
    lines: list[str] = []
    figures = train_offtable([synth], tmp_path / "m.onnx", epochs=1, batch=8, log=lines.append)
    assert figures["train_dice"] > 0
    assert _said(lines) == [f"off-table model: 1 labelled photo not readable, left out: {broken}"]


def test_a_die_models_calibration_names_the_photos_it_could_not_read(rolls: Path, tmp_path: Path):
    from vision.train.quantize import quantize_die_model

    name = "dicecam-reader-cocked"
    for suffix in (".onnx", ".pt"):
        shutil.copy(MODELS / f"{name}{suffix}", tmp_path / f"{name}{suffix}")
    photos, (broken,) = _copy_with_broken(rolls, tmp_path / "photos")
    lines: list[str] = []
    quantize_die_model(tmp_path / f"{name}.onnx", [photos], log=lines.append)  # every photo
    assert _said(lines) == [
        f"{name}.onnx calibration: 1 labelled photo not readable, left out: {broken}"
    ]


def test_the_outline_models_training_and_calibration_name_the_photos_they_could_not_read(
    rolls: Path, tmp_path: Path
):
    from vision.train.quantize import quantize_surface_model
    from vision.train.surface import train_surface

    synth, (broken,) = _copy_with_broken(rolls, tmp_path / "synth")
    real = tmp_path / "real"
    shutil.copytree(rolls / "images" / "train", real / "images" / "train")
    shutil.copytree(rolls / "labels" / "train", real / "labels" / "train")
    real_broken = _break(sorted((real / "images" / "train").glob("*.jpg"))[-1])
    lines: list[str] = []
    float_file = tmp_path / "float.onnx"
    train_surface(
        [synth], float_file, real=[real], input_size=64, epochs=1, batch=4, log=lines.append
    )
    assert _said(lines) == [
        f"outline model: 2 labelled photos not readable, left out: {broken}, {real_broken}"
    ]
    lines.clear()
    quantize_surface_model(float_file, [synth], tmp_path / "int8.onnx", log=lines.append)
    assert _said(lines) == [
        f"float.onnx calibration: 1 labelled photo not readable, left out: {broken}"
    ]


def test_photos_it_could_not_read_are_said_before_a_calibration_with_nothing_left_is_refused(
    rolls: Path, tmp_path: Path
):
    from vision.train.quantize import quantize_die_model

    name = "dicecam-reader-cocked"
    for suffix in (".onnx", ".pt"):
        shutil.copy(MODELS / f"{name}{suffix}", tmp_path / f"{name}{suffix}")
    photos, broken = _copy_with_broken(rolls, tmp_path / "photos", n=4)
    shutil.rmtree(photos / "images" / "val")  # the 4 train photos, none readable
    lines: list[str] = []
    with pytest.raises(ValueError, match="expected labelled dice to calibrate on"):
        quantize_die_model(tmp_path / f"{name}.onnx", [photos], log=lines.append)
    (said,) = _said(lines)
    head = f"{name}.onnx calibration: 4 labelled photos not readable, left out: "
    assert said.startswith(head) and said.endswith(" (and 1 more)"), said
    named = said[len(head) : -len(" (and 1 more)")].split(", ")  # three, in the order drawn
    assert len(set(named)) == 3 and set(named) < set(map(str, broken))


def test_photos_it_could_not_read_are_said_before_an_outline_training_with_none_is_refused(
    rolls: Path, tmp_path: Path
):
    from vision.train.surface import train_surface

    synth, broken = _copy_with_broken(rolls, tmp_path / "synth", n=4)  # every train photo
    lines: list[str] = []
    with pytest.raises(FileNotFoundError, match="no readable samples"):
        train_surface([synth], tmp_path / "s.onnx", input_size=64, epochs=1, log=lines.append)
    names = ", ".join(map(str, broken[:3]))
    assert _said(lines) == [
        f"outline model: 4 labelled photos not readable, left out: {names} (and 1 more)"
    ]


def test_the_face_classifiers_int8_calibration_names_the_photos_it_could_not_read(
    rolls: Path, tmp_path: Path, capsys
):
    from vision.train.run import _quantize_faces

    shutil.copy(MODELS / "dicecam-reader-faces.pt", tmp_path / "x-faces.pt")
    photos, (broken,) = _copy_with_broken(rolls, tmp_path / "photos")
    _quantize_faces(tmp_path / "x-faces.onnx", [photos / "images" / "train"])
    out = capsys.readouterr().out.splitlines()
    assert _said(out) == [
        f"x-faces.onnx calibration: 1 labelled photo not readable, left out: {broken}"
    ]
    assert "int8, calibrated on" in out[-1]  # the readable photos still calibrate it
