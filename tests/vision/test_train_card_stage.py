"""``dicecam train --stage card`` measures the model in ``--out`` and writes its card: with no
model there it is refused in one line naming the file, before any data is rendered.

It rendered the recipe's whole synthetic set (1600 photos by default, many minutes on a CPU),
then died of a ModelError traceback (exit 1) when it came to read with the missing model.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from dicecam_testing.cli import run_in_process as run

pytestmark = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("ultralytics", "torch")),
    reason="dicecam train needs the [train] extra",
)


def test_the_card_of_a_model_not_there_is_refused_before_any_data(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    recipe = tmp_path / "tiny.yaml"
    recipe.write_text("name: tiny\nsynth: {n: 12, val_fraction: 0.5}\n")
    out, work = tmp_path / "out", tmp_path / "work"
    out.mkdir()
    argv = ["train", "--recipe", str(recipe), "--stage", "card"]
    code, _, err = run(capsys, *argv, "--out", str(out), "--work", str(work))
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert f"expected the model at {out / 'tiny.onnx'}: --stage card measures it" in err
    assert not work.exists() or not any(work.rglob("*.jpg"))  # nothing rendered
    assert not any(out.iterdir())


def test_a_synthetic_set_too_small_for_a_val_photo_is_measured_without_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """4 photos at a val_fraction of 0.1 give no val photo: the card's step died of a
    DatasetError traceback ('no photos') measuring them."""
    import shutil

    import vision.train.run as train_run

    monkeypatch.setattr(train_run, "ROBOFLOW_EVAL", tmp_path / "no-real-photos")
    models = Path(__file__).resolve().parents[2] / "models"
    out, work = tmp_path / "out", tmp_path / "work"
    out.mkdir()
    for f in models.glob("dicecam-reader*"):  # the shipped set, as a model named tiny
        shutil.copy(f, out / f.name.replace("dicecam-reader", "tiny", 1))
    recipe = tmp_path / "tiny.yaml"
    recipe.write_text("name: tiny\nsynth: {n: 4, val_fraction: 0.1}\ntest: {n: 0}\n")
    argv = ["train", "--recipe", str(recipe), "--stage", "card", "--work", str(work)]
    code, said, err = run(capsys, *argv, "--out", str(out))
    assert code == 0, err
    assert "synthetic val: no photo in " in said and "not measured" in said
    card = (out / "tiny.md").read_text(encoding="utf-8")
    assert "synthetic val" not in card
