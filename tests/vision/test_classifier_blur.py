"""Blurred crops in the face classifier's training (``--faces-blur``): a soft or shaken camera."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

if importlib.util.find_spec("torch") is None:
    pytest.skip("the train extra (torch) trains the face classifier", allow_module_level=True)

import torch  # noqa: E402

from vision.train.classifier import BLUR_SIGMA, blur_crops, train_classifier  # noqa: E402


def _pips(n: int) -> torch.Tensor:
    """n crops of sharp white squares on black, 3 channels."""
    x = torch.zeros(n, 3, 24, 24)
    x[:, :, 6:10, 6:10] = 1
    x[:, :, 14:18, 12:20] = 1
    return x


def test_a_share_of_the_crops_is_blurred_and_the_rest_is_left_as_it_was():
    x = _pips(200)
    assert blur_crops(x, 0.0, torch.Generator().manual_seed(0)) is x
    y = blur_crops(x, 0.5, torch.Generator().manual_seed(1))
    changed = (y != x).flatten(1).any(1)
    assert 60 <= int(changed.sum()) <= 140, int(changed.sum())
    assert torch.equal(y[~changed], x[~changed])  # untouched bit for bit
    # a blur spreads light without adding any: the sum stays, the peak falls, edges soften
    assert torch.allclose(y.sum((1, 2, 3)), x.sum((1, 2, 3)), rtol=1e-4)
    assert float(y[changed].amax((1, 2, 3)).max()) < 1
    assert float(y[changed][:, :, 8, 10].min()) > 0  # light beside the first square
    # each crop its own sigma within the range: the peaks differ
    assert len(set(np.round(y[changed].amax((1, 2, 3)).numpy(), 4))) > 10
    assert BLUR_SIGMA[0] < BLUR_SIGMA[1]


def test_every_crop_blurred_at_share_one_and_channels_kept_apart():
    x = _pips(8)
    x[:, 1] = 0  # no green: blurring must not leak light across channels
    y = blur_crops(x, 1.0, torch.Generator().manual_seed(0))
    assert (y != x).flatten(1).any(1).all()
    assert float(y[:, 1].abs().max()) == 0


def test_training_with_blurred_crops_learns_another_model_from_the_same_seed():
    rng = np.random.default_rng(0)
    crops = rng.integers(0, 255, (64, 48, 48, 3), dtype=np.uint8)
    classes = rng.integers(0, 6, 64)
    kw = {"epochs": 1, "batch": 32, "width": 0.5, "seed": 3, "log": lambda _: None}
    plain = train_classifier(crops, classes, **kw)
    again = train_classifier(crops, classes, **kw)
    blurred = train_classifier(crops, classes, blur=0.5, **kw)
    first = next(iter(plain.state_dict().values()))
    assert torch.equal(first, next(iter(again.state_dict().values())))  # reproducible
    assert not torch.equal(first, next(iter(blurred.state_dict().values())))


def test_the_command_line_takes_a_share_from_0_to_1(capsys):
    from service.cli import main

    assert main(["train", "--stage", "faces", "--faces-blur", "1.5"]) == 2
    assert "--faces-blur is a share from 0 to 1, got 1.5" in capsys.readouterr().err


def test_the_command_line_sets_the_face_classifier_learning_rate(capsys, monkeypatch):
    import vision.train.run
    from service.cli import main

    assert main(["train", "--stage", "faces", "--faces-lr", "0"]) == 2
    assert "--faces-lr is a learning rate above 0, got 0.0" in capsys.readouterr().err
    seen = {}

    def train_reader(recipe, args):  # stands in for the training: what recipe does it get?
        seen["lr"] = recipe.faces.lr
        return 0

    monkeypatch.setattr(vision.train.run, "train_reader", train_reader)
    assert main(["train", "--stage", "faces", "--faces-lr", "0.001"]) == 0
    assert seen == {"lr": 0.001}
