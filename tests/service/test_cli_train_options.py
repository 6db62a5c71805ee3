"""`dicecam train`'s options: each one the run takes reaches the recipe training is given, each
one at the edge of its range is taken, and each refusal comes before any data is rendered.
Training itself is stood in for (:func:`vision.train.run.train_reader` records what it got)."""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path
from typing import Any

import pytest

from dicecam_testing.cli import run_in_process as run
from dicecam_testing.folders import yolo_folder

pytestmark = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("ultralytics", "torch")),
    reason="dicecam train needs the [train] extra",
)

RECIPE = """
name: tiny
synth: {n: 10}
detector: {model: yolo11n.yaml, epochs: 7, time_hours: 2.0}
faces: {epochs: 4, blur: 0.25, lr: 0.002}
"""


@pytest.fixture
def trained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """``train_reader`` stood in for: it records the recipe and arguments it was given and
    returns 0. ``argv`` is a run of a recipe whose detector has both epochs and time_hours."""
    import vision.train.run as train_run

    seen: dict[str, Any] = {}

    def train_reader(recipe, args: argparse.Namespace) -> int:
        seen.update(recipe=recipe, args=args)
        return 0

    monkeypatch.setattr(train_run, "train_reader", train_reader)
    recipe = tmp_path / "tiny.yaml"
    recipe.write_text(RECIPE)
    seen["argv"] = ["train", "--recipe", str(recipe), "--work", str(tmp_path / "work")]
    return seen


def _ran(capsys, trained: dict[str, Any], *argv: str) -> Any:
    code, _, err = run(capsys, *trained["argv"], *argv)
    assert code == 0, err
    return trained["recipe"]


def test_each_option_reaches_the_recipe_training_is_given(capsys, tmp_path, trained):
    plain = _ran(capsys, trained)
    assert (plain.detector.epochs, plain.detector.time_hours) == (7, 2.0)
    assert (plain.faces.epochs, plain.faces.blur, plain.faces.lr) == (4, 0.25, 0.002)
    assert plain.synth.n == 10 and plain.detector.model == "yolo11n.yaml"
    assert trained["args"].seed == 0 and trained["args"].device == "cpu"

    # --epochs is the detector's whole budget: the recipe's hours no longer cut it short
    epochs = _ran(capsys, trained, "--epochs", "3")
    assert (epochs.detector.epochs, epochs.detector.time_hours) == (3, None)
    assert _ran(capsys, trained, "--time-hours", "0.5").detector.time_hours == 0.5
    assert _ran(capsys, trained, "--faces-epochs", "5").faces.epochs == 5
    assert _ran(capsys, trained, "--faces-blur", "1").faces.blur == 1.0  # a share: 1 is all
    assert _ran(capsys, trained, "--faces-lr", "0.01").faces.lr == 0.01
    assert _ran(capsys, trained, "--synth", "0").synth.n == 0  # 0: the real photos only
    init = tmp_path / "start.pt"
    init.write_bytes(b"weights")
    assert _ran(capsys, trained, "--init", str(init)).detector.model == str(init.resolve())
    a, b = yolo_folder(tmp_path / "a", ["x"]), yolo_folder(tmp_path / "b", ["y"])
    _ran(capsys, trained, "--data", str(a), "--data", str(b), "--seed", "4")
    assert (trained["args"].data, trained["args"].seed) == ([a, b], 4)


def test_a_soup_goes_with_the_detector_step_alone_or_the_whole_run(capsys, tmp_path, trained):
    parts = [tmp_path / "a.pt", tmp_path / "b.pt"]
    for part in parts:
        part.write_bytes(b"weights")
    soup = [arg for part in parts for arg in ("--soup", str(part))]
    for stage in ("detector", "all"):
        _ran(capsys, trained, *soup, "--stage", stage)
        assert trained["args"].soup == parts and trained["args"].stage == stage


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--epochs", "0"], "--epochs must be at least 1, got 0"),
        (["--time-hours", "0"], "--time-hours must be above 0, got 0.0"),
        (["--workers", "0"], "--workers must be at least 1, got 0"),
        (["--faces-lr", "0"], "--faces-lr is a learning rate above 0, got 0.0"),
        (["--faces-blur", "1.5"], "--faces-blur is a share from 0 to 1, got 1.5"),
        (["--synth", "-1"], "--synth must be 0 or more images, got -1"),
        (["--freeze", "4"], "--freeze go with --from"),
        (["--detector", "keep"], "--detector go with --from"),
    ],
)
def test_an_option_out_of_its_range_is_refused_before_any_data(capsys, trained, argv, said):
    code, _, err = run(capsys, *trained["argv"], *argv)
    assert code == 2 and said in err and len(err.strip().splitlines()) == 1, err
    assert "recipe" not in trained  # training never started


def test_weights_of_another_kind_are_refused_as_init_join_or_soup_parts(capsys, tmp_path, trained):
    onnx = tmp_path / "model.onnx"
    onnx.write_bytes(b"an export")
    pt = tmp_path / "a.pt"
    pt.write_bytes(b"weights")
    for argv, said in (
        (["--init", str(onnx)], f"--init must be a detector checkpoint (.pt file), got {onnx}"),
        (
            ["--faces-join", str(onnx)],
            f"--faces-join must be face classifier weights (.pt), got {onnx}",
        ),
        (["--soup", str(pt), "--soup", str(pt), "--from", str(onnx)], "--soup averages finished"),
    ):
        code, _, err = run(capsys, *trained["argv"], *argv)
        assert code == 2 and said in err, err
    code, _, err = run(capsys, *trained["argv"], "--faces-join", str(pt), "--from", str(onnx))
    assert (
        code == 2 and "--faces-join trains a classifier to join; it does not go with --from" in err
    )
    assert "recipe" not in trained


@pytest.mark.parametrize("argv", [["--freeze", "0"], ["--freeze", "22"], ["--replay", "0"]])
def test_fine_tuning_options_at_the_ends_of_their_range_are_taken(capsys, tmp_path, argv):
    """The run goes on to its next check (no --data) instead of refusing the option."""
    code, _, err = run(capsys, "train", "--from", str(tmp_path / "m.onnx"), *argv)
    assert code == 2 and "--from needs --data DIR" in err, err


def test_a_holdout_of_nothing_is_refused(capsys, tmp_path):
    code, _, err = run(capsys, "train", "--from", str(tmp_path / "m.onnx"), "--holdout", "0")
    assert code == 2 and "--holdout is a share above 0 and under 1, got 0.0" in err


def test_missing_float_weights_are_a_usage_error_only_for_the_int8_step(
    capsys, tmp_path, monkeypatch
):
    """``--stage int8`` quantizes weights a player may not have: one line. For any other step a
    missing file is a fault of the run, raised as it is."""
    import vision.train.run as train_run

    def train_reader(recipe, args):
        raise FileNotFoundError(f"no float weights at {tmp_path / 'x.pt'}")

    monkeypatch.setattr(train_run, "train_reader", train_reader)
    code, _, err = run(capsys, "train", "--stage", "int8", "--work", str(tmp_path / "w"))
    assert code == 2 and f"no float weights at {tmp_path / 'x.pt'}" in err
    with pytest.raises(FileNotFoundError):
        run(capsys, "train", "--stage", "faces", "--work", str(tmp_path / "w"))


def test_fine_tuning_fills_in_the_defaults_its_help_gives(capsys, tmp_path, monkeypatch):
    """--from without --holdout, --replay or --detector: 0.2, 300 and auto, as --help says."""
    import vision.train.finetune as finetune

    from dicecam_testing.finetune import new_dice, starting_model

    seen: dict[str, argparse.Namespace] = {}
    monkeypatch.setattr(finetune, "check_starting_model", lambda base: None)
    monkeypatch.setattr(finetune, "finetune", lambda recipe, args: seen.update(args=args) or 0)
    base, data = starting_model(tmp_path / "base"), new_dice(tmp_path / "data")
    argv = ["train", "--from", str(base), "--data", str(data), "--out", str(tmp_path / "out")]
    assert run(capsys, *argv)[0] == 0
    args = seen["args"]
    assert (args.holdout, args.replay, args.detector, args.freeze) == (0.2, 300, "auto", None)
