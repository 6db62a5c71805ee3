"""`dicecam train --device`: where the detector trains, checked before any data is rendered."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from dicecam_testing.cli import run_in_process as run
from dicecam_testing.yolo import recording_ultralytics

needs_torch = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="the train extra (torch)"
)


@pytest.mark.parametrize("device", ["gpu", "²", "-1", "٣"])
def test_a_device_that_is_neither_cpu_nor_a_gpu_number_is_refused(tmp_path, capsys, device):
    # '²' is a digit to str.isdigit, which int() refuses: it raised a ValueError
    work = tmp_path / "work"
    code, _, err = run(capsys, "train", "--device", device, "--work", str(work))
    assert code == 2
    assert f"--device must be cpu or a CUDA GPU's number such as 0, got {device!r}" in err
    assert not work.exists()


@needs_torch
def test_a_gpu_this_machine_lacks_is_refused_before_rendering(tmp_path, capsys):
    import torch

    work = tmp_path / "work"
    missing = torch.cuda.device_count()  # numbered from 0: one past the last
    code, _, err = run(capsys, "train", "--device", str(missing), "--work", str(work))
    assert code == 2
    assert f"--device {missing}: " in err and "use --device cpu" in err
    assert not work.exists()


@pytest.mark.parametrize(("device", "loaders"), [("cpu", False), ("0", True)])
def test_the_device_reaches_ultralytics_with_loader_processes_on_a_gpu(
    tmp_path, monkeypatch, device, loaders
):
    import vision.train.detector as detector

    calls = recording_ultralytics(monkeypatch)
    monkeypatch.setattr(detector.os, "cpu_count", lambda: 16)
    final = detector.train_detector(tmp_path / "data.yaml", tmp_path / "out", device=device)
    assert final == tmp_path / "out" / "train" / "weights" / "last.pt"
    (call,) = calls
    assert call["device"] == device
    assert call["workers"] == (8 if loaders else 0)


@needs_torch
@pytest.mark.parametrize("device", ["cpu", "0"])
def test_fine_tuning_trains_its_detector_and_classifier_on_the_device_asked_for(
    tmp_path, monkeypatch, capsys, device
):
    """`--from` trains a detector too: it went to the CPU whatever --device said."""
    import torch

    import vision.train.detector as detector
    import vision.train.finetune as finetune

    from dicecam_testing.finetune import (
        new_dice,
        stand_in_shipping,
        stand_in_training,
        starting_model,
    )

    training = stand_in_training(monkeypatch)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    asked: list[str] = []

    def train_detector(data_yaml, out_dir, **kwargs) -> Path:
        asked.append(kwargs["device"])
        return Path(out_dir) / "best.pt"

    monkeypatch.setattr(detector, "train_detector", train_detector)
    stand_in_shipping(monkeypatch)
    monkeypatch.setattr(finetune, "_one_class", lambda onnx: True)  # a stand-in detector
    argv = ["train", "--from", str(starting_model(tmp_path / "base"))]
    argv += ["--data", str(new_dice(tmp_path / "data")), "--out", str(tmp_path / "out")]
    argv += ["--detector", "tune", "--replay", "0", "--work", str(tmp_path / "work")]
    code, _, err = run(capsys, *argv, "--device", device)
    assert code == 0, err
    assert asked == [device]
    assert training["faces"]["device"] == device  # the face classifier's step too
