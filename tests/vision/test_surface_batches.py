"""How the outline trainer feeds its net (:mod:`vision.train.surface_batches`): the one-cycle
schedule is torch's, the batches made by worker processes are the same with any number of
them and cover the epoch in order, device names are read or refused, and a time budget stops
training early. Tiny real runs: 64 px, 12 rendered photos."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from vision.train.surface_batches import BatchMaker, one_cycle, torch_device
from vision.train.surface_data import augmented_batch


def _photos(n: int = 10, size: int = 88) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    images = rng.integers(0, 256, (n, size, size, 3), dtype=np.uint8)
    masks = np.zeros((n, size, size), np.uint8)
    masks[:, : size // 2] = 2  # the top half is the surface in play
    return images, masks


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch (train extra)")
def test_one_cycle_is_torchs_one_cycle_schedule_with_its_momentum():
    import torch

    param = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.AdamW([param], lr=3e-3)
    steps = 2000  # torch's phases end a step early (at 0.15 T - 1 and T - 1): within 1 step
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps, pct_start=0.15)
    for step in range(steps):
        rate, beta = one_cycle(step / steps, 3e-3)
        group = opt.param_groups[0]
        assert rate == pytest.approx(group["lr"], abs=3e-3 * 0.01), step
        assert beta == pytest.approx(group["betas"][0], abs=0.1 * 0.01), step
        opt.step()
        if step < steps - 1:
            sched.step()


def test_one_cycle_rises_to_its_peak_then_falls_and_stays_within_its_ends():
    rates = [one_cycle(p / 100, 1.0)[0] for p in range(101)]
    peak = int(np.argmax(rates))
    assert peak == 15 and rates[peak] == pytest.approx(1.0)
    assert all(a <= b for a, b in zip(rates[:peak], rates[1 : peak + 1], strict=True))
    assert all(a >= b for a, b in zip(rates[peak:], rates[peak + 1 :], strict=False))
    assert one_cycle(-1.0, 1.0) == one_cycle(0.0, 1.0) and one_cycle(2.0, 1.0) == one_cycle(
        1.0, 1.0
    )


def test_device_names_are_read_or_refused():
    assert [torch_device(d) for d in ("cpu", " CPU", "0", "2", "cuda", "cuda:3")] == [
        "cpu",
        "cpu",
        "cuda:0",
        "cuda:2",
        "cuda:0",
        "cuda:3",
    ]
    for bad in ("gpu", "cuda:x", "", "-1", "mps"):
        with pytest.raises(ValueError, match="expected a device 'cpu', 'cuda', 'cuda:N'"):
            torch_device(bad)


def _epoch(workers: int, seed: int = 5) -> list[tuple[np.ndarray, tuple]]:
    images, masks = _photos()
    rng = np.random.default_rng(seed)
    with BatchMaker(images, masks, 64, 1, "mixed", workers) as maker:
        return list(maker.epoch(rng, rng.permutation(len(images)), 4))


def test_worker_batches_are_the_same_with_any_number_of_workers_and_cover_the_epoch():
    one, three = _epoch(1), _epoch(3)
    assert [len(idx) for idx, _ in one] == [4, 4, 2]
    assert sorted(np.concatenate([idx for idx, _ in one]).tolist()) == list(range(10))
    for (idx_a, made_a), (idx_b, made_b) in zip(one, three, strict=True):
        np.testing.assert_array_equal(idx_a, idx_b)
        for a, b in zip(made_a, made_b, strict=True):
            np.testing.assert_array_equal(a, b)
    x, y, known = one[0][1]
    assert x.shape == (4, 3, 64, 64) and y.shape == (4, 1, 16, 16) and known.shape == (4, 16, 16)
    assert not np.array_equal(one[0][1][0], _epoch(1, seed=6)[0][1][0])  # the seed counts


def test_without_workers_the_batches_come_from_the_trainers_own_generator():
    """Workers 0: the same batches as calling the augmentation with the trainer's generator,
    in turn, after drawing the order from it (the trainer before the workers came)."""
    images, masks = _photos()
    rng = np.random.default_rng(5)
    with BatchMaker(images, masks, 64, 1, "mild") as maker:
        got = list(maker.epoch(rng, rng.permutation(len(images)), 4))
    again = np.random.default_rng(5)
    order = again.permutation(len(images))
    for k, (idx, made) in enumerate(got):
        np.testing.assert_array_equal(idx, order[4 * k : 4 * k + 4])
        expected = augmented_batch(again, images[idx], masks[idx], 64, 1, "mild")
        for a, b in zip(made, expected, strict=True):
            np.testing.assert_array_equal(a, b)


def test_negative_workers_are_refused():
    images, masks = _photos(2)
    with pytest.raises(ValueError, match="expected 0 or more workers, got -1"):
        BatchMaker(images, masks, 64, 1, "mild", -1)


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch (train extra)")
def test_training_with_workers_and_a_time_budget(tmp_path: Path):
    """Two workers make the batches of a real (tiny) run; a budget of 3 seconds stops a run of
    10,000 epochs early, and says how far it got."""
    from vision.synth import write_dataset
    from vision.train.surface import train_surface

    rolls = tmp_path / "rolls"
    write_dataset(rolls, 8, seed=3, size=(160, 120), val_fraction=0.25)
    quiet = {"input_size": 64, "batch": 4, "log": lambda _: None}
    figures = train_surface(rolls, tmp_path / "w.onnx", epochs=2, workers=2, **quiet)
    assert figures["epochs"] == 2 and figures["steps"] == 2 * 2
    assert (tmp_path / "w.onnx").is_file() and 0.0 <= figures["val_mean_iou"] <= 1.0
    budget = train_surface(rolls, tmp_path / "t.onnx", epochs=10_000, minutes=0.05, **quiet)
    assert 1 <= budget["epochs"] < 10_000 and budget["steps"] < 2 * 10_000
    assert 2 * (budget["epochs"] - 1) < budget["steps"] <= 2 * budget["epochs"]  # each begun
    assert (tmp_path / "t.onnx").is_file()
    with pytest.raises(ValueError, match="expected a time budget above 0 minutes, got 0"):
        train_surface(rolls, tmp_path / "x.onnx", epochs=1, minutes=0, **quiet)
    with pytest.raises(ValueError, match="expected a device"):
        train_surface(rolls, tmp_path / "x.onnx", epochs=1, device="gpu", **quiet)
