"""Training's pieces on their own, on tiny synthetic data: a soup refuses checkpoints of
different architectures, face training mixes in replay crops, and face classifiers join into
one model that reads their mean."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

if any(importlib.util.find_spec(m) is None for m in ("ultralytics", "torch")):
    pytest.skip("training needs the [train] extra (ultralytics, torch)", allow_module_level=True)


def test_soup_checks_the_checkpoints_share_an_architecture(tmp_path: Path):
    import torch
    from torch import nn

    from vision.train.soup import average_checkpoints

    def save(name: str, model: nn.Module) -> Path:
        torch.save({"model": model, "epoch": 3}, tmp_path / name)
        return tmp_path / name

    torch.manual_seed(0)
    a = save("a.pt", nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2)))
    b_model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    b_model[1].num_batches_tracked.fill_(7)
    b = save("b.pt", b_model)
    soup = average_checkpoints([a, b])
    ta, tb = torch.load(a, weights_only=False), torch.load(b, weights_only=False)
    got = soup["model"].state_dict()
    assert torch.allclose(got["0.weight"], (ta["model"][0].weight + tb["model"][0].weight) / 2)
    assert int(got["1.num_batches_tracked"]) == 0  # counters: the first checkpoint's
    assert soup["epoch"] == 3 and soup["optimizer"] is None
    wide = save("wide.pt", nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3)))
    with pytest.raises(ValueError, match=r"0.weight is \(3, 2\), expected \(2, 2\)"):
        average_checkpoints([a, wide])
    other = save("other.pt", nn.Sequential(nn.Linear(2, 2)))
    with pytest.raises(ValueError, match="not the architecture of .*tensors differ"):
        average_checkpoints([a, other])
    (tmp_path / "text.pt").write_text("hello")
    with pytest.raises(ValueError, match="text.pt could not be loaded"):
        average_checkpoints([a, tmp_path / "text.pt"])
    torch.save({"weights": [1, 2]}, tmp_path / "dict.pt")
    with pytest.raises(ValueError, match="ultralytics detector checkpoint with a 'model'"):
        average_checkpoints([a, tmp_path / "dict.pt"])
    with pytest.raises(ValueError, match="at least 2 checkpoints, got 1"):
        average_checkpoints([a])


def test_face_training_mixes_in_replay_crops(tmp_path: Path):
    from vision.synth import write_dataset
    from vision.train.crops import load_crops
    from vision.train.pipeline import train_faces
    from vision.train.recipe import Recipe

    new, old = tmp_path / "new", tmp_path / "old"
    write_dataset(new, 2, seed=21, size=(160, 160), val_fraction=0.0)
    write_dataset(old, 6, seed=22, size=(160, 160), val_fraction=0.0)
    n_new = len(load_crops([new / "images"], jitter=0)[0])
    n_old = len(load_crops([old / "images"], jitter=0)[0])
    assert n_old > n_new > 0
    recipe = Recipe.model_validate({"faces": {"epochs": 1, "batch": 16, "jitter": 0}})
    logs: list[str] = []
    out = train_faces(
        recipe,
        [new / "images"],
        tmp_path / "faces.onnx",
        replay_dirs=[old / "images"],
        replay_share=0.5,
        log=logs.append,
    )
    assert out.is_file() and out.with_suffix(".pt").is_file()
    repeat = max(1, round(n_old / n_new))
    assert f"+ {n_old} replay crops, new crops repeated {repeat}x" in "\n".join(logs)
    with pytest.raises(ValueError, match="replay_share < 1, got 1.0"):
        train_faces(
            recipe,
            [new / "images"],
            tmp_path / "x.onnx",
            replay_dirs=[old / "images"],
            replay_share=1.0,
        )


def test_face_classifiers_join_into_one_model_that_reads_their_mean(tmp_path: Path):
    import torch

    from vision.faces import FaceClassifier
    from vision.synth import write_dataset
    from vision.train.classifier import load_classifier
    from vision.train.pipeline import train_faces
    from vision.train.recipe import Recipe

    data = tmp_path / "data"
    write_dataset(data, 3, seed=23, size=(160, 160), val_fraction=0.0)
    # float files: the mean below is exact to 1e-4 (int8 builds round each member)
    recipe = Recipe.model_validate(
        {"faces": {"epochs": 1, "batch": 16, "jitter": 0, "int8": False}}
    )
    first = train_faces(recipe, [data / "images"], tmp_path / "a.onnx", seed=1, log=print)
    second = train_faces(recipe, [data / "images"], tmp_path / "b.onnx", seed=2, log=print)
    logs: list[str] = []
    joined = train_faces(
        recipe,
        [data / "images"],
        tmp_path / "j.onnx",
        seed=2,
        join=[first.with_suffix(".pt")],
        log=logs.append,
    )
    assert f"joined with {first.with_suffix('.pt')}" in "\n".join(logs)
    members = load_classifier(joined.with_suffix(".pt"))
    assert members.n_members == 2  # the one joined and the one trained
    # the runtime reads the joined ONNX as any classifier: its probabilities are the mean
    rgb = np.random.default_rng(0).integers(0, 255, (120, 160, 3), dtype=np.uint8)
    boxes = np.array([[10, 10, 50, 50], [70, 40, 120, 95]], np.float32)
    probs = [FaceClassifier(m).classify(rgb, boxes)[2] for m in (first, second, joined)]
    np.testing.assert_allclose(probs[2], (probs[0] + probs[1]) / 2, atol=1e-4)
    # fine-tuning starts from the joined weights and keeps both members; joining again stays flat
    tuned = train_faces(
        recipe, [data / "images"], tmp_path / "t.onnx", init=joined.with_suffix(".pt"), log=print
    )
    assert load_classifier(tuned.with_suffix(".pt")).n_members == 2
    # tune_last (what fine-tuning a reader does): the first member keeps its weights and stats
    last = train_faces(
        recipe,
        [data / "images"],
        tmp_path / "l.onnx",
        init=joined.with_suffix(".pt"),
        tune_last=True,
        log=print,
    )
    before, after = (load_classifier(m.with_suffix(".pt")).members for m in (joined, last))
    first = zip(before[0].state_dict().values(), after[0].state_dict().values(), strict=True)
    assert all(torch.equal(x, y) for x, y in first)
    second = zip(before[1].state_dict().values(), after[1].state_dict().values(), strict=True)
    assert not all(torch.equal(x, y) for x, y in second)
    again = train_faces(
        recipe, [data / "images"], tmp_path / "k.onnx", join=[tuned.with_suffix(".pt")], log=print
    )
    assert load_classifier(again.with_suffix(".pt")).n_members == 3
    assert torch.load(again.with_suffix(".pt"))["members"][0]["n_classes"] == 7
