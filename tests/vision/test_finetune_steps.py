"""What `dicecam train --from` gives each of its steps and says of them: the player's options
reach the detector's and face classifier's training, the before/after figures are printed and
put in the card as measured, and the data.yaml names only folders that exist. Training is stood
in for and its inputs recorded (dicecam_testing.finetune_record)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

if any(importlib.util.find_spec(m) is None for m in ("ultralytics", "torch")):
    pytest.skip("dicecam train needs the [train] extra", allow_module_level=True)

from service.cli import main  # noqa: E402

from dicecam_testing.finetune_record import (  # noqa: E402
    STARTING,
    TUNED,
    own_name,
    photos,
    recorded_fine_tuning,
)


def _held_out(work: Path) -> list[str]:
    return sorted(own_name(n) for n in photos([work / "split" / "heldout" / "images"]))


def _split_held(data: Path, out: Path, **options) -> list[str]:
    from vision.train.holdout import split_dataset

    split = split_dataset([data], out, replay=[], **options)
    return sorted(own_name(n) for n in photos([split.heldout / "images"]))


def test_the_players_options_reach_the_detector_and_the_face_classifier(
    tmp_path, monkeypatch, capsys
):
    """--epochs, --faces-epochs, --freeze, --seed and --holdout each change what is trained; the
    face classifier goes on from the starting one's weights at a third of the recipe's learning
    rate, on the new photos with every known folder (once) as replay, its last member tuned."""
    from vision.train.finetune import FACES_REPLAY_SHARE
    from vision.train.recipe import load_recipe

    run = recorded_fine_tuning(monkeypatch, tmp_path, one_class=False)
    argv = [*run["argv"], "--detector", "tune", "--replay", "2", "--epochs", "3"]
    argv += ["--faces-epochs", "5", "--freeze", "4", "--seed", "2", "--holdout", "0.5"]
    assert main(argv) == 0, capsys.readouterr().err
    recipe = load_recipe()

    detector = run["detector"]["kwargs"]
    assert (detector["epochs"], detector["freeze"], detector["seed"]) == (3, 4, 2)
    assert detector["model"] == str(run["base"].with_suffix(".pt"))
    assert detector["single_cls"] is False  # a detector of faces stays one of faces
    assert detector["device"] == "cpu"
    assert detector["augment"] == {**recipe.detector.augment, "close_mosaic": 0, "warmup_epochs": 0}

    faces = run["faces"]
    assert faces["epochs"] == 5
    assert faces["lr"] == pytest.approx(recipe.faces.lr / 3)
    assert faces["kwargs"]["init"] == run["base"].with_name("mine-faces.pt")
    assert faces["kwargs"]["replay_dirs"] == [run["known"]]  # listed twice, replayed once
    assert faces["kwargs"]["replay_share"] == FACES_REPLAY_SHARE
    assert faces["kwargs"]["tune_last"] is True

    # the split is the one --seed 2 --holdout 0.5 make, not the defaults' (seed 0, 0.2)
    held = _held_out(run["work"])
    assert held == _split_held(run["data"], tmp_path / "s", holdout=0.5, seed=2)
    assert held != _split_held(run["data"], tmp_path / "s0", holdout=0.5, seed=0)
    assert held != _split_held(run["data"], tmp_path / "s1", holdout=0.2, seed=2)


def test_the_figures_before_and_after_are_printed_and_carded_as_measured(
    tmp_path, monkeypatch, capsys
):
    """The starting model's figures on the held-out photos and on the real eval set, then the
    fine-tuned model's, each in one line 'before -> after', and the same in the card."""
    from vision.train.run import ROBOFLOW_EVAL

    run = recorded_fine_tuning(monkeypatch, tmp_path)
    assert main([*run["argv"], "--detector", "tune", "--replay", "2"]) == 0, capsys.readouterr().err
    printed = capsys.readouterr().out.splitlines()
    b, a = STARTING, TUNED
    for key in ("held-out (new dice)", "roboflow-dice eval (real)"):
        line = (
            f"{key}: face accuracy {b['face_accuracy']} -> {a['face_accuracy']}, "
            f"recall {b['recall']} -> {a['recall']}, exact {b['exact_accuracy']} -> "
            f"{a['exact_accuracy']}"
        )
        assert line in printed, printed
    assert "detector: the fine-tuned detector (--detector tune)" in printed

    held_dir = run["work"] / "split" / "heldout"
    tuned = run["work"] / "model" / "mine-ft.onnx"
    assert run["evaluations"] == [
        (run["base"], held_dir, "starting"),
        (run["base"], ROBOFLOW_EVAL, "starting"),
        (tuned, held_dir, "tuned"),
        (tuned, ROBOFLOW_EVAL, "tuned"),
    ]
    card = json.loads((run["out"] / "mine-ft.json").read_text())["evaluations"]
    for when, figures in (("before", STARTING), ("after", TUNED)):
        for key in ("held-out (new dice)", "roboflow-dice eval (real)"):
            assert card[f"{when}, {key}"].items() >= figures.items(), (when, key)
    n_held = len(_held_out(run["work"]))
    text = (run["out"] / "mine-ft.md").read_text()
    assert f"new dice set ({6 - n_held} photos; {n_held} held out)" in text
    assert text.count(f"Replay: {run['known']}") == 1


def test_without_replay_the_data_yaml_names_only_folders_that_exist(tmp_path, monkeypatch, capsys):
    """With --replay 0 there is no replay folder: the detector is given the new photos alone."""
    run = recorded_fine_tuning(monkeypatch, tmp_path)
    assert main([*run["argv"], "--detector", "tune", "--replay", "0"]) == 0, capsys.readouterr().err
    data = run["detector"]["yaml"]
    assert data["train"] == [str(run["work"] / "split" / "train" / "images")]
    assert all(Path(folder).is_dir() for folder in [*data["train"], data["val"]])


def test_auto_keeps_a_better_detector_after_measuring_the_known_photos(
    tmp_path, monkeypatch, capsys
):
    """--detector auto: the fine-tuned detector, better on the held-out photos, is measured on the
    known photos (not replayed) too before it is kept; the card's 'after' is its figures."""
    run = recorded_fine_tuning(monkeypatch, tmp_path)
    assert main([*run["argv"], "--detector", "auto", "--replay", "2"]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "detector: the fine-tuned one (held-out score" in out
    known = run["work"] / "split" / "known"
    measured = [which for _, folder, which in run["evaluations"] if folder == known]
    assert measured == ["tuned", "starting"]
    assert (run["out"] / "mine-ft.onnx").read_bytes() == b"tuned detector"
    card = json.loads((run["out"] / "mine-ft.json").read_text())["evaluations"]
    assert card["after, held-out (new dice)"].items() >= TUNED.items()


@pytest.mark.parametrize(("n_new", "few"), [(10, True), (11, False)])
def test_under_ten_photos_to_train_on_are_said_to_be_few(tmp_path, monkeypatch, capsys, n_new, few):
    """FEW_PHOTOS (10) to train on, one held out: 9 are said to be few, 10 are not."""
    run = recorded_fine_tuning(monkeypatch, tmp_path, n_new=n_new)
    argv = [*run["argv"], "--detector", "tune", "--replay", "0", "--holdout", "0.01"]
    assert main(argv) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert f"fine-tuning on {n_new - 1} photos" in out
    assert (f"note: {n_new - 1} photos are few to learn new dice from" in out) == few


def test_the_starting_models_die_check_and_cocked_die_model_go_with_the_fine_tuned_one(
    tmp_path, monkeypatch, capsys
):
    """A starting reader with NAME-cocked.onnx and NAME-verify.onnx: the fine-tuned reader has
    both (the cocked-die model as it was; the die check's threshold set on the new photos)."""
    run = recorded_fine_tuning(monkeypatch, tmp_path)
    for side in ("cocked", "verify"):
        run["base"].with_name(f"mine-{side}.onnx").write_bytes(f"start {side}".encode())
    assert main([*run["argv"], "--detector", "tune", "--replay", "0"]) == 0
    assert (run["out"] / "mine-ft-cocked.onnx").read_bytes() == b"start cocked"
    assert (run["out"] / "mine-ft-verify.onnx").is_file()


def test_auto_with_every_known_photo_replayed_measures_no_known_ones(tmp_path, monkeypatch, capsys):
    """--replay 4 of the 4 known photos leaves none to check forgetting on: nothing is measured
    there (no '-- the fine-tuned detector' heading over an evaluation of nothing)."""
    run = recorded_fine_tuning(monkeypatch, tmp_path)
    assert main([*run["argv"], "--detector", "auto", "--replay", "4"]) == 0
    assert [folder.name for _, folder, _ in run["evaluations"]].count("known") == 0
    assert capsys.readouterr().out.count("-- the ") == 2  # the held-out photos, by each
