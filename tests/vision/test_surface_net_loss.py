"""The outline model's loss, outputs and export (:mod:`vision.train.surface_net`), on values
worked out by hand: a model trained on a wrong loss or exported without its metadata draws the
wrong table edge, and off-table dice are judged against that edge."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the train extra (torch)")

from vision.train.surface_net import (  # noqa: E402
    build_net,
    export_surface,
    probabilities,
    surface_loss,
)


def test_one_layer_loss_is_cross_entropy_plus_half_the_soft_dice_of_fully_known_photos():
    logits = torch.zeros(1, 1, 2, 2)  # p = 0.5 everywhere
    target = torch.ones(1, 1, 2, 2)
    # soft Dice of p 0.5 on 4 surface cells: 1 - (2 * 2 + 1) / (2 + 4 + 1) = 2 / 7
    expected = math.log(2) + 0.5 * 2 / 7
    assert float(surface_loss(logits, target)) == pytest.approx(expected, rel=1e-5)
    # a photo with a cell partly known: cross-entropy weighed by what is known, no Dice
    known = torch.tensor([[[1.0, 1.0], [1.0, 0.5]]])
    assert float(surface_loss(logits, target, known)) == pytest.approx(math.log(2), rel=1e-5)


def test_one_layer_loss_leaves_out_what_is_not_known():
    target = torch.tensor([[[[1.0, 0.0], [1.0, 0.0]]]])
    known = torch.tensor([[[1.0, 0.0], [1.0, 0.0]]])  # the right column: nobody labelled it
    sure = torch.tensor([[[[9.0, 0.0], [9.0, 0.0]]]])
    wrong_where_unknown = torch.tensor([[[[9.0, 9.0], [9.0, 9.0]]]])
    a, b = surface_loss(sure, target, known), surface_loss(wrong_where_unknown, target, known)
    assert float(a) == pytest.approx(float(b)) and float(a) < 1e-3


def test_three_layer_loss_is_cross_entropy_plus_dice_of_the_surface_and_of_a_tray():
    logits = torch.zeros(1, 3, 2, 2)  # a third each: off, table, tray
    table = torch.zeros(1, 3, 2, 2)
    table[:, 1] = 1
    # surface (table + tray) p 2/3 on 4 table cells: 1 - (16/3 + 1) / (8/3 + 4 + 1) = 4/23
    assert float(surface_loss(logits, table)) == pytest.approx(math.log(3) + 0.5 * 4 / 23, rel=1e-5)
    tray = torch.zeros(1, 3, 2, 2)
    tray[:, 2] = 1
    # and the tray layer's own Dice: p 1/3 on 4 tray cells, 1 - (8/3 + 1) / (4/3 + 4 + 1) = 8/19
    assert float(surface_loss(logits, tray)) == pytest.approx(
        math.log(3) + 0.5 * 4 / 23 + 0.5 * 8 / 19, rel=1e-5
    )


def test_outputs_are_a_sigmoid_for_one_layer_and_shares_of_the_layers_for_three():
    one = probabilities(torch.tensor([[[[0.0, 2.0]]]]))
    assert one.flatten().tolist() == pytest.approx([0.5, 1 / (1 + math.exp(-2))])
    three = probabilities(torch.randn(2, 3, 4, 4))
    torch.testing.assert_close(three.sum(1), torch.ones(2, 4, 4))


def test_width_scales_the_network():
    def size(width: float) -> int:
        return sum(p.numel() for p in build_net(1, width).parameters())

    assert size(0.5) < size(1.0) < size(1.5)
    assert build_net(3, 0.5)(torch.zeros(1, 3, 64, 64)).shape == (1, 3, 16, 16)


def test_the_export_takes_any_batch_and_carries_its_metadata(tmp_path):
    import onnx
    import onnxruntime as ort

    net = build_net(1, 0.5, channels=4)
    out = export_surface(
        net, tmp_path / "s.onnx", {"min_certainty": 0.4}, input_size=64, channels=4
    )
    meta = {e.key: e.value for e in onnx.load(str(out)).metadata_props}
    assert meta == {
        "task": "dicecam-surface",
        "imgsz": "64",
        "stride": "4",
        "min_certainty": "0.4",
    }
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).random((2, 4, 64, 64), np.float32)
    (y,) = session.run(None, {"image": x})
    assert y.shape == (2, 1, 16, 16)
    net.eval()  # a fresh net is in training mode, and the export hands it back so
    with torch.no_grad():
        np.testing.assert_allclose(y, torch.sigmoid(net(torch.from_numpy(x))).numpy(), atol=1e-4)


def test_the_export_hands_the_net_back_in_the_mode_it_came_in(tmp_path):
    """A caller going on with the net after an export (reading a photo, training on) finds it as
    it was: torch.onnx would put it back in its wrapper's training mode, where a forward pass
    reads batch statistics and overwrites the running ones the model was trained to."""
    import onnxruntime as ort

    torch.manual_seed(0)
    net = build_net(1, 0.5).eval()
    out = export_surface(net, tmp_path / "s.onnx", input_size=64)
    assert not any(m.training for m in net.modules())
    norms = [m for m in net.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    before = [m.running_mean.clone() for m in norms]
    x = np.random.default_rng(1).random((2, 3, 64, 64), np.float32)
    with torch.no_grad():
        read = torch.sigmoid(net(torch.from_numpy(x))).numpy()
    for norm, mean in zip(norms, before, strict=True):
        torch.testing.assert_close(norm.running_mean, mean, rtol=0, atol=0)
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(session.run(None, {"image": x})[0], read, atol=1e-4)
    # a net in training with one part frozen in eval mode comes back so, part by part
    net.train()
    net.e1.eval()
    export_surface(net, tmp_path / "s.onnx", input_size=64)
    assert net.training and net.e2.training and not net.e1.training and not net.e1[1].training
