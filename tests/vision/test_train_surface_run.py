"""How ``train_surface`` runs (:mod:`vision.train.surface`): the net trains in training mode every
epoch and is measured in eval mode, each cell's weight is the real photos' weight and the edge
weight on top of what is known, the validation reads every val photo, the weights saved are the
net's trained ones and a resumed run starts from them, and the command line hands on each option.
Tiny real runs: 64 px, 12 rendered photos (some in val), a few epochs."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest

if importlib.util.find_spec("torch") is None:
    pytest.skip("the train extra (torch) trains the surface model", allow_module_level=True)

import torch  # noqa: E402

import vision.train.surface as surface  # noqa: E402
from vision.synth import write_dataset  # noqa: E402
from vision.train.surface_data import edge_cells  # noqa: E402
from vision.train.surface_net import build_net  # noqa: E402

QUIET = {"input_size": 64, "batch": 4, "log": lambda _: None}


@pytest.fixture(scope="module")
def rolls(tmp_path_factory) -> list[Path]:
    """Two small `dicecam synth` folders (12 photos in all, 4 of them in val)."""
    root = tmp_path_factory.mktemp("surface-run")
    folders = []
    for seed in (3, 4):
        write_dataset(root / f"synth-{seed}", 6, seed=seed, size=(160, 120), val_fraction=0.34)
        folders.append(root / f"synth-{seed}")
    return folders


def test_iou_is_of_the_surface_at_half_and_one_when_neither_shows():
    probs = np.zeros((1, 4, 4), np.float32)
    probs[0, :2] = 0.5  # 8 cells at the cut
    target = np.zeros((4, 4), np.float32)
    target[:, :2] = 1.0  # 8 cells, 4 of them shared
    assert surface._iou(probs, target) == pytest.approx(4 / 12)
    assert surface._iou(np.zeros((1, 4, 4), np.float32), np.zeros((4, 4), np.float32)) == 1.0
    assert surface._iou(np.zeros((1, 4, 4), np.float32), target) == 0.0


def test_each_epoch_trains_in_training_mode_and_is_measured_in_eval_mode(
    rolls, tmp_path, monkeypatch
):
    """Six epochs: the net is measured after the fifth, and the sixth trains in training mode
    again (batch statistics, not the running ones it would be measured with)."""
    calls: list[tuple[bool, bool]] = []  # (gradients on, net in training mode) of each pass
    exported: list[bool] = []

    def recording_net(*args: Any) -> Any:
        net = build_net(*args)

        def record(module: Any, _: Any) -> None:
            if not exported:  # the export's own trace is not training
                calls.append((torch.is_grad_enabled(), module.training))

        net.register_forward_pre_hook(record)
        return net

    def export(*args: Any, **kw: Any) -> Path:
        exported.append(True)
        return export_surface(*args, **kw)

    export_surface = surface.export_surface
    monkeypatch.setattr(surface, "build_net", recording_net)
    monkeypatch.setattr(surface, "export_surface", export)
    figures = surface.train_surface(rolls, tmp_path / "s.onnx", epochs=6, limit=2, **QUIET)
    training = [mode for grad, mode in calls if grad]
    measuring = [mode for grad, mode in calls if not grad]
    assert len(training) == 6  # 4 train photos (2 a folder) in a batch of 4, 6 times
    assert all(training) and not any(measuring) and exported
    assert len(measuring) >= 2  # after epochs 5 and 6 (and for the figures)
    assert figures["val_samples"] == 4


def test_each_cell_is_weighed_by_its_photo_and_its_edge(rolls, tmp_path, monkeypatch):
    """What the loss is given is what the batch knows, times the real photos' weight for a real
    photo (1 for a rendered one), times 1 + edge_weight on the cells next to a surface edge."""
    real = tmp_path / "real"
    write_dataset(real, 3, seed=9, size=(160, 120), val_fraction=0.0)
    real_photos: set[bytes] = set()
    batches: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # is real, known, y
    given: list[np.ndarray] = []

    def loading_real(*args: Any, **kw: Any) -> tuple[np.ndarray, np.ndarray]:
        images, masks = load_real(*args, **kw)
        real_photos.update(im.tobytes() for im in images)
        return images, masks

    def batching(rng, images, masks, *args: Any) -> Any:
        x, y, known = augment(rng, images, masks, *args)
        is_real = np.array([im.tobytes() in real_photos for im in images])
        batches.append((is_real, known.copy(), y.copy()))
        return x, y, known

    def loss(logits, target, known) -> Any:
        given.append(known.numpy().copy())
        return surface_loss(logits, target, known)

    load_real, augment = surface.load_real_surface, surface.augmented_batch
    surface_loss = surface.surface_loss
    monkeypatch.setattr(surface, "load_real_surface", loading_real)
    monkeypatch.setattr(surface, "augmented_batch", batching)
    monkeypatch.setattr(surface, "surface_loss", loss)
    figures = surface.train_surface(
        rolls, tmp_path / "s.onnx", real=[real], real_weight=3.0, edge_weight=2.0, epochs=2, **QUIET
    )
    assert figures["real_samples"] == 3 and len(given) == len(batches) == 2 * 3
    assert sum(int(is_real.sum()) for is_real, _, _ in batches) == 2 * 3
    for (is_real, known, y), weighed in zip(batches, given, strict=True):
        photo = np.where(is_real, 3.0, 1.0)[:, None, None]
        np.testing.assert_allclose(weighed, known * photo * (1 + 2.0 * edge_cells(y)), rtol=1e-6)
    assert any(edge_cells(y).any() for _, _, y in batches)  # edges were weighed


def test_the_saved_weights_are_the_trained_net_and_a_resumed_run_starts_from_them(
    rolls, tmp_path, monkeypatch
):
    import onnxruntime as ort

    started: list[dict[str, Any]] = []  # the weights each run's net starts from

    def recording_net(*args: Any) -> Any:
        net = build_net(*args)
        started.append({k: t.clone() for k, t in net.state_dict().items()})
        return net

    monkeypatch.setattr(surface, "build_net", recording_net)
    first = tmp_path / "not" / "made" / "yet" / "s.onnx"  # made before training, not after
    figures = surface.train_surface(rolls, first, epochs=2, limit=1, **QUIET)
    assert figures["train_samples"] == 2 and figures["val_samples"] == 4  # val: every photo
    weights = torch.load(str(first.with_suffix(".pt")), map_location="cpu")
    net = build_net(1, 1.0)
    net.load_state_dict(weights)
    net.eval()
    x = np.random.default_rng(0).random((2, 3, 64, 64), np.float32)
    session = ort.InferenceSession(str(first), providers=["CPUExecutionProvider"])
    with torch.no_grad():
        read = torch.sigmoid(net(torch.from_numpy(x))).numpy()
    np.testing.assert_allclose(session.run(None, {"image": x})[0], read, atol=1e-4)
    # resumed at a learning rate too small to move a weight: it ends where the first run did
    again = tmp_path / "again.onnx"
    surface.train_surface(
        rolls, again, epochs=1, lr=1e-12, resume=first.with_suffix(".pt"), **QUIET
    )
    resumed = torch.load(str(again.with_suffix(".pt")), map_location="cpu")
    convolutions = [k for k, t in weights.items() if t.ndim == 4]  # no batch statistics
    assert all(not torch.allclose(started[0][k], weights[k], atol=1e-4) for k in convolutions)
    for key in convolutions:
        torch.testing.assert_close(resumed[key], weights[key], atol=1e-6, rtol=0)


def test_the_command_line_hands_on_each_option(tmp_path, monkeypatch, capsys):
    given: dict[str, Any] = {}

    def train_surface(data, out, **kw: Any) -> dict[str, Any]:
        given.update(data=data, out=out, **kw)
        return {"val_mean_iou": 0.5}

    monkeypatch.setattr(surface, "train_surface", train_surface)
    argv = ["a", "b", "--input", "96", "--layers", "3", "--width", "1.5", "--min-certainty"]
    argv += ["0.4", "--out", "o.onnx", "--epochs", "3", "--batch", "5", "--lr", "0.01"]
    argv += ["--seed", "2", "--threads", "1", "--limit", "7", "--resume", "w.pt", "--real", "r"]
    argv += ["--real-weight", "4", "--dice", "--photometric", "strong", "--edge-weight", "2.5"]
    argv += ["--device", "cuda:1", "--workers", "3", "--minutes", "2.5"]
    assert surface.main(argv) == 0
    assert capsys.readouterr().out == '{"val_mean_iou": 0.5}\n'
    assert given == {
        "data": ["a", "b"],
        "out": "o.onnx",
        "input_size": 96,
        "layers": 3,
        "width": 1.5,
        "min_certainty": 0.4,
        "epochs": 3,
        "batch": 5,
        "lr": 0.01,
        "seed": 2,
        "threads": 1,
        "limit": 7,
        "resume": "w.pt",
        "real": ["r"],
        "real_weight": 4.0,
        "dice": True,
        "photometric": "strong",
        "edge_weight": 2.5,
        "device": "cuda:1",
        "workers": 3,
        "minutes": 2.5,
    }
