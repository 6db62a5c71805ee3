"""A player's mistakes with `dicecam train --from`, without training: the checks before the
run, and a run stopped halfway (Ctrl-C) or run twice into one --out. Training itself is stood
in for (the face classifier's step writes files; the evaluations measure nothing)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

if any(importlib.util.find_spec(m) is None for m in ("ultralytics", "torch")):
    pytest.skip("dicecam train needs the [train] extra", allow_module_level=True)

from service.cli import main  # noqa: E402

from dicecam_testing.finetune import new_dice, stand_in_training, starting_model  # noqa: E402
from dicecam_testing.folders import yolo_folder  # noqa: E402


@pytest.fixture
def base(tmp_path: Path) -> Path:
    """A starting model: the detector's export and checkpoint, its face classifier's weights."""
    return starting_model(tmp_path / "base")


def _train(base: Path, data: Path, out: Path, *more: str) -> list[str]:
    return ["train", "--from", str(base), "--data", str(data), "--out", str(out), *more]


def test_all_dice_of_one_face_and_the_starting_model_as_output_are_refused(tmp_path, base, capsys):
    """A one-class export ('die') imported as YOLO reads as face 1 everywhere: the classifier
    learned that every die of the new style reads 1."""
    data = yolo_folder(tmp_path / "data", [f"p{i}" for i in range(12)])  # 12 dice, all class 0
    assert main(_train(base, data, tmp_path / "out")) == 2
    err = capsys.readouterr().err
    assert "got all 12 labelled 1" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()
    (data / "labels" / "p3.txt").write_text("4 0.5 0.5 0.1 0.1\n")  # one 5: on to the next check
    # an output that is the starting model itself, written over while it is read
    assert main(_train(base, data, base.parent, "--name", "mine")) == 2
    assert "expected a model other than the one fine-tuned" in capsys.readouterr().err
    assert (base.parent / "mine.onnx").read_bytes() == b"start mine.onnx"


@pytest.fixture
def stand_ins(monkeypatch):
    """Training stood in for; ``calls["interrupt"]`` makes the face classifier's step a Ctrl-C."""
    return stand_in_training(monkeypatch)


def test_ctrl_c_leaves_the_earlier_model_whole_and_the_same_command_runs_again(
    tmp_path, base, stand_ins, capsys
):
    """Stopped after the detector was placed in --out, a run left a new detector beside the
    earlier run's face classifier and card, selected by DICECAM_MODEL as one model."""
    data = new_dice(tmp_path / "data")
    out = tmp_path / "ft"
    out.mkdir()
    earlier = {f"mine-ft{part}": b"earlier" for part in (".onnx", "-faces.onnx", "-verify.onnx")}
    for name, content in earlier.items():
        (out / name).write_bytes(content)
    argv = _train(base, data, out, "--detector", "keep", "--replay", "0")
    argv += ["--work", str(tmp_path / "work")]

    stand_ins["interrupt"] = True
    assert main(argv) == 130
    captured = capsys.readouterr()
    assert "exists: it stays as it is until this run ends" in captured.out
    assert f"dicecam train: interrupted: {out} left as it was" in captured.err
    assert captured.err.count("interrupted") == 1  # said once
    assert {p.name: p.read_bytes() for p in out.iterdir()} == earlier

    stand_ins["interrupt"] = False
    assert main(argv) == 0
    assert f"model -> {out / 'mine-ft.onnx'}" in capsys.readouterr().out
    # replaced whole: the earlier die check, which this model has none of, went with it
    assert sorted(p.name for p in out.iterdir()) == [
        "mine-ft-faces.onnx",
        "mine-ft-faces.pt",
        "mine-ft.json",
        "mine-ft.md",
        "mine-ft.onnx",
        "mine-ft.pt",
    ]
    assert (out / "mine-ft.onnx").read_bytes() == b"start mine.onnx"  # --detector keep
    assert (out / "mine-ft-faces.onnx").read_bytes() == b"new faces"
    assert "## Reproduce" in (out / "mine-ft.md").read_text()
    assert not any((tmp_path / "work" / "mine-ft" / "model").iterdir())


def test_the_two_detectors_measured_for_the_choice_are_told_apart(tmp_path, monkeypatch, capsys):
    """Both are NAME.onnx (one in the trial folder), so the player saw two evaluations headed
    '== NAME.onnx on heldout' with different figures and no word of which was which."""
    import vision.train.run as run
    from vision.train.finetune import _choose_detector

    base, tuned = tmp_path / "base" / "m.onnx", tmp_path / "out" / "m.onnx"
    for path in (base, tuned, tuned.with_name("m-faces.onnx")):
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(path.parent.name.encode())
    figures = {"face_accuracy": 1.0, "matched_dice": 4, "predicted_dice": 4, "truth_dice": 4}

    def evaluate_model(model, folder, split):
        print(f"== {Path(model).name} on {Path(folder).name}")
        return figures

    monkeypatch.setattr(run, "evaluate_model", evaluate_model)
    note, _ = _choose_detector(base, tuned, tmp_path / "held", tmp_path / "trial")
    printed = capsys.readouterr().out.splitlines()
    assert printed == [
        "-- the fine-tuned detector, with the fine-tuned face classifier:",
        "== m.onnx on held",
        "-- the starting detector, with the fine-tuned face classifier:",
        "== m.onnx on held",
    ]
    assert "starting one, kept" in note and tuned.read_bytes() == b"base"
