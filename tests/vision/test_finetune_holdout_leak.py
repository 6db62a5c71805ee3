"""`dicecam train --from` never trains on its held-out photos: the figures it prints (and issue
#8's "N% on held-out photos") are of photos neither the detector, the face classifier nor the die
check's threshold saw. And a run stopped halfway leaves no file in the work folder that the next
run would publish. Training is stood in for; what each step would train on is read from its
inputs (dicecam_testing.finetune_record)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

if any(importlib.util.find_spec(m) is None for m in ("ultralytics", "torch")):
    pytest.skip("dicecam train needs the [train] extra", allow_module_level=True)

from service.cli import main  # noqa: E402

from dicecam_testing.finetune_record import own_name, photos, recorded_fine_tuning  # noqa: E402


@pytest.fixture
def run_recorded(tmp_path: Path, monkeypatch) -> dict[str, Any]:
    """A fine-tuning run (``--detector tune``, 2 replay photos) with each step's inputs recorded."""
    run = recorded_fine_tuning(monkeypatch, tmp_path)
    run["argv"] += ["--detector", "tune", "--replay", "2", "--holdout", "0.34"]
    return run


def test_no_held_out_photo_is_trained_on_by_name_or_content(run_recorded, capsys):
    """The held-out photos are the fine-tuned model's only honest figure on the new dice: one in
    the detector's data.yaml, the face classifier's folders or the die check's calibration makes
    it a figure on seen photos."""
    assert main(run_recorded["argv"]) == 0, capsys.readouterr().err
    held_dir = run_recorded["work"] / "split" / "heldout" / "images"
    held = {own_name(n): digest for n, digest in photos([held_dir]).items()}
    assert held and f"{len(held)} held out" in capsys.readouterr().out

    for step in ("detector", "faces", "verifier"):
        trained = {own_name(n): digest for n, digest in run_recorded[step]["photos"].items()}
        assert not held.keys() & trained.keys(), step
        assert not set(held.values()) & set(trained.values()), step
        # the other new photos, and the 2 replayed known ones (the classifier: all 4 known)
        assert len([n for n in trained if n.startswith("p")]) == 6 - len(held), step
        known = {"detector": 2, "faces": 4, "verifier": 0}[step]
        assert len([n for n in trained if n.startswith("k")]) == known, step
    data = run_recorded["detector"]["yaml"]
    assert data["val"] == str(held_dir)
    assert str(held_dir) not in data["train"]
    assert run_recorded["faces"]["kwargs"]["val_dirs"] == [held_dir]


def test_a_stopped_runs_model_folder_is_emptied_before_training_and_never_published(
    run_recorded, capsys
):
    """A run stopped after its die check was made left work/NAME/model/NAME-verify.onnx; the next
    run (of a starting model with no die check) would put it into --out beside its new model."""
    stale = run_recorded["work"] / "model"
    stale.mkdir(parents=True)
    (stale / "mine-ft-verify.onnx").write_bytes(b"a stopped run's die check")
    (stale / "mine-ft-faces.onnx").write_bytes(b"a stopped run's faces")
    assert main(run_recorded["argv"]) == 0, capsys.readouterr().err
    assert run_recorded["model_at_start"] == []
    out = run_recorded["out"]
    assert not (out / "mine-ft-verify.onnx").exists()
    assert (out / "mine-ft-faces.onnx").read_bytes() == b"new faces"
    assert (out / "mine-ft.onnx").read_bytes() == b"tuned detector"
