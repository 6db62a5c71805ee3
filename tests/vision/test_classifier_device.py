"""`dicecam train --device`: the face classifier trains where it is asked to, and comes back on
the CPU to be exported. The GPU test runs only where torch sees a CUDA GPU (the lent GPU
machine); CI has none and skips it by name."""

from __future__ import annotations

import argparse
import importlib.util
import types
from pathlib import Path

import numpy as np
import pytest

if importlib.util.find_spec("torch") is None:
    pytest.skip("the train extra (torch) trains the face classifier", allow_module_level=True)

import torch  # noqa: E402

import vision.train.classifier as classifier  # noqa: E402
from vision.train.classifier import evaluate_classifier, train_classifier  # noqa: E402

needs_cuda = pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no CUDA GPU here (run it on the lent GPU machine)"
)

SPOTS = [(8, 8), (8, 36), (22, 22), (36, 8), (36, 36), (22, 8)]


def _dice(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """n 48 px crops showing 1-6 white spots on a noisy dark face; the class is spots - 1."""
    rng = np.random.default_rng(seed)
    classes = rng.integers(0, 6, n)
    crops = rng.integers(0, 60, (n, 48, 48, 3), dtype=np.uint8)
    for crop, k in zip(crops, classes, strict=True):
        for y, x in SPOTS[: k + 1]:
            crop[y - 3 : y + 3, x - 3 : x + 3] = 255
    return crops, classes


def _watched(monkeypatch) -> list[str]:
    """The device of every batch the new network sees."""
    seen: list[str] = []
    build = classifier.FaceNet

    def face_net(*args, **kwargs):
        model = build(*args, **kwargs)
        model.register_forward_pre_hook(lambda _m, inputs: seen.append(inputs[0].device.type))
        return model

    monkeypatch.setattr(classifier, "FaceNet", face_net)
    return seen


KW = {"epochs": 6, "batch": 32, "width": 0.5, "seed": 1, "lr": 0.01, "log": lambda _: None}
LEARNT = 0.6  # of fresh crops read right after 6 epochs (chance: 1 in 6; a GPU's draws differ)


def test_on_the_cpu_every_batch_stays_there(monkeypatch):
    seen = _watched(monkeypatch)
    crops, classes = _dice(64)
    model = train_classifier(crops, classes, device="cpu", **{**KW, "epochs": 1})
    assert seen and set(seen) == {"cpu"}
    assert {p.device.type for p in model.parameters()} == {"cpu"}


@needs_cuda
def test_on_a_gpu_it_trains_there_and_comes_back_on_the_cpu(monkeypatch):
    seen = _watched(monkeypatch)
    crops, classes = _dice(240)
    model = train_classifier(crops, classes, device="0", val=_dice(60, seed=2), **KW)
    assert seen and set(seen) == {"cuda"}  # the training batches and the validation
    assert {p.device.type for p in model.parameters()} == {"cpu"}  # ready to export
    assert {b.device.type for b in model.buffers()} == {"cpu"}
    assert evaluate_classifier(model, *_dice(120, seed=1)) >= LEARNT


@needs_cuda
def test_a_joined_model_tunes_its_last_member_on_a_gpu_and_keeps_the_first(tmp_path):
    crops, classes = _dice(240)
    first = train_classifier(crops, classes, **KW)
    joined = classifier.join_classifiers([first, classifier.FaceNet(0.5)])
    start = tmp_path / "joined.pt"
    classifier.save_classifier(joined, start)
    kept = {k: v.clone() for k, v in joined.members[0].state_dict().items()}
    tuned = train_classifier(crops, classes, init=start, tune_last=True, device="0", **KW)
    after = tuned.members[0].state_dict()
    assert all(torch.equal(kept[k], after[k]) for k in kept)  # weights and statistics
    assert evaluate_classifier(tuned, *_dice(120, seed=1)) >= LEARNT


def test_the_recipe_and_fine_tuning_hand_the_device_to_the_face_classifier(tmp_path, monkeypatch):
    """`dicecam train --stage faces --device 0` (and `all`) trains the classifier there."""
    import vision.train.pipeline as pipeline
    import vision.train.run as run
    from vision.train.recipe import load_recipe

    asked: list[str] = []

    def train_faces(recipe, dirs, out_onnx, **kw) -> Path:
        asked.append(kw["device"])
        return Path(out_onnx)

    monkeypatch.setattr(pipeline, "train_faces", train_faces)
    args = argparse.Namespace(stage="faces", device="0", seed=0, work=tmp_path)
    prepared = types.SimpleNamespace(train_dirs=[tmp_path], val_dirs=[])
    run._steps(load_recipe(), args, prepared, tmp_path, "tiny")
    assert asked == ["0"]
