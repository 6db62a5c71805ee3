"""The die check's training (:mod:`vision.train.verify`) from crops mined before (its cache),
and its calibration to a fine-tuned reader's new dice: which threshold it picks and what its
figures count."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch", reason="the train extra (torch) trains the die check")

from vision.verify import VerifyModel  # noqa: E402

from dicecam_testing.die_check import starting_reader  # noqa: E402


def _crops(n_dice: int, n_false: int) -> tuple[np.ndarray, np.ndarray]:
    """Crops of dice (white) and false boxes (black)."""
    rng = np.random.default_rng(n_dice * 31 + n_false)
    dice = np.full((n_dice, 48, 48, 3), 230, np.uint8)
    false = np.full((n_false, 48, 48, 3), 20, np.uint8)
    x = np.concatenate([dice, false]) + rng.integers(0, 10, (n_dice + n_false, 48, 48, 3))
    return x.astype(np.uint8), np.array([1] * n_dice + [0] * n_false, np.int64)


def _cache(path: Path, train: tuple, val: tuple) -> Path:
    np.savez(path, x=train[0], y=train[1], vx=val[0], vy=val[1])
    return path


def _train(tmp_path: Path, cache: Path, **kwargs):
    from vision.train.verify import train_verifier

    out = tmp_path / "verify.onnx"
    lines: list[str] = []
    figures = train_verifier([], out, cache=cache, epochs=4, batch=16, log=lines.append, **kwargs)
    assert lines[0] == f"mined crops from {cache}"  # nothing mined: no reader ran
    return figures, VerifyModel(out)


def test_the_threshold_keeps_the_val_dice_and_is_at_most_a_half(tmp_path):
    cache = _cache(tmp_path / "c.npz", _crops(40, 56), _crops(10, 6))
    figures, model = _train(tmp_path, cache)
    # dice the check is sure of would put the threshold near 1: it stays at 0.5
    assert figures["threshold"] == model.threshold == 0.5
    assert figures["val_dice_kept"] == 1.0 and figures["val_false_dropped"] == 1.0
    assert (figures["train_boxes"], figures["train_false"]) == (96, 56)
    assert (figures["val_boxes"], figures["val_false"]) == (16, 6)
    assert model.tta and model.metadata["task"] == "dicecam-verify"


def test_mined_boxes_of_one_kind_are_refused_naming_what_came(tmp_path):
    from vision.train.verify import train_verifier

    x, y = _crops(8, 0)
    cache = _cache(tmp_path / "c.npz", (x, y), (x, y))
    with pytest.raises(ValueError, match="both dice and not, got 8 boxes, 8 dice"):
        train_verifier([], tmp_path / "v.onnx", cache=cache, epochs=1, log=lambda _: None)
    assert not (tmp_path / "v.onnx").exists()


def test_calibration_lowers_the_threshold_but_never_raises_it(tmp_path):
    from vision.synth import write_dataset
    from vision.train.verify import calibrate_verifier

    base = starting_reader(tmp_path / "base")
    new = tmp_path / "new"
    write_dataset(new, 6, seed=5, size=(320, 240), val_fraction=0.0)
    out = tmp_path / "out-verify.onnx"
    # keeping only the surest dice would put the threshold above the check's own 0.5
    figures = calibrate_verifier(base, [new / "images"], out, keep=0.01, log=lambda _: None)
    assert figures is not None and figures["dice"] > 0
    assert figures["threshold"] == VerifyModel(out).threshold == 0.5
    # keeping every die lowers it; the dice counted as dropped are those under the old one
    lowered = calibrate_verifier(base, [new / "images"], out, keep=1.0, log=lambda _: None)
    assert lowered is not None and lowered["threshold"] < 0.5
    assert lowered["dropped_before"] == figures["dropped_before"] > 0


def test_real_photos_add_background_boxes_as_false_ones(tmp_path):
    from vision.synth import write_dataset
    from vision.train.mining import is_val_scene
    from vision.train.verify import train_verifier

    rolls = tmp_path / "rolls"
    write_dataset(rolls, 4, seed=3, size=(320, 240), val_fraction=0.0)
    real = tmp_path / "real"
    shutil.copytree(rolls / "images" / "train", real / "images")
    shutil.copytree(rolls / "labels" / "train", real / "labels")
    train_photos = [p for p in (real / "images").glob("*.jpg") if not is_val_scene(p.stem)]
    assert train_photos
    figures = {}
    for n in (1, 3):
        figures[n] = train_verifier(
            [],
            tmp_path / f"v{n}.onnx",
            real=[real / "images"],
            background=n,
            epochs=1,
            log=lambda _: None,
        )
    added = figures[3]["train_false"] - figures[1]["train_false"]
    assert added == 2 * len(train_photos)
    assert figures[3]["train_boxes"] - figures[1]["train_boxes"] == added


@pytest.mark.parametrize("keep", [0.0, -0.5, 1.5])
def test_a_keep_that_is_not_a_share_is_refused_before_anything_runs(tmp_path, keep):
    # keep 0 took the die past the last one (IndexError after mining and training), 1.5 a
    # threshold from the wrong end of the dice, without a word
    from vision.train.verify import calibrate_verifier, train_verifier

    message = f"keep must be a share of the dice, more than 0 and at most 1, got {keep}"
    with pytest.raises(ValueError, match=message):
        train_verifier([tmp_path / "nowhere"], tmp_path / "v.onnx", keep=keep)
    with pytest.raises(ValueError, match=message):
        calibrate_verifier(tmp_path / "none.onnx", [], tmp_path / "v.onnx", keep=keep)
    assert not (tmp_path / "v.onnx").exists()
