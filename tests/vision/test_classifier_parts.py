"""The face classifier's parts on tiny networks: joining refuses what it cannot mean, saving
keeps each member's width and classes, tune_last keeps every member but the last as it was,
the loss weighs classes by how rare they are, evaluation reads every crop, and the export takes
any batch at the size it is given."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

if importlib.util.find_spec("torch") is None:
    pytest.skip("the train extra (torch) trains the face classifier", allow_module_level=True)

import torch  # noqa: E402

from vision.train.classifier import (  # noqa: E402
    FaceNet,
    evaluate_classifier,
    export_classifier,
    join_classifiers,
    load_classifier,
    save_classifier,
    train_classifier,
)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _crops(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, 255, (n, 48, 48, 3), dtype=np.uint8), rng.integers(0, 6, n)


def _net(width: float, n_classes: int = 7, seed: int = 0):
    torch.manual_seed(seed)
    return FaceNet(width, n_classes).eval()


def _same(a, b) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def test_joining_refuses_no_classifier_and_classifiers_of_other_classes():
    with pytest.raises(ValueError, match="expected at least one classifier to join, got none"):
        join_classifiers([])
    with pytest.raises(ValueError, match=r"the same classes, got \[7, 2\]"):
        join_classifiers([_net(0.25), _net(0.25, 2)])
    joined = join_classifiers([join_classifiers([_net(0.25), _net(0.25, seed=1)]), _net(0.25)])
    assert joined.n_members == 3 and len(joined.members) == 3  # flat, not nested


def test_a_saved_classifier_comes_back_with_its_width_classes_and_members(tmp_path: Path):
    x = torch.rand(2, 3, 48, 48)
    two = _net(0.5, 2)
    back = load_classifier(save_classifier(two, tmp_path / "two.pt"))
    assert (back.width, back.n_classes) == (0.5, 2) and _same(back, two)
    joined = join_classifiers([_net(0.25), _net(0.5, seed=1)]).eval()
    back = load_classifier(save_classifier(joined, tmp_path / "joined.pt")).eval()
    assert [m.width for m in back.members] == [0.25, 0.5]
    with torch.no_grad():
        torch.testing.assert_close(back(x), joined(x))
        # the joined output is the log of the mean of the members' probabilities
        mean = sum(torch.softmax(m(x), 1) for m in joined.members) / 2
        torch.testing.assert_close(torch.exp(joined(x)), mean)
    plain = _net(1.0)
    torch.save(plain.state_dict(), tmp_path / "plain.pt")  # an old file: a bare state dict
    assert _same(load_classifier(tmp_path / "plain.pt"), plain)


def test_tune_last_keeps_every_member_but_the_last_as_it_was(tmp_path: Path):
    joined = join_classifiers([_net(0.25, seed=s) for s in range(3)])
    start = save_classifier(joined, tmp_path / "joined.pt")
    crops, classes = _crops(64)
    kw = {"epochs": 1, "batch": 32, "log": lambda _: None}
    tuned = train_classifier(crops, classes, init=start, tune_last=True, **kw)
    assert _same(tuned.members[0], joined.members[0])  # weights and batch-norm statistics
    assert _same(tuned.members[1], joined.members[1])
    assert not _same(tuned.members[2], joined.members[2])
    assert all(p.requires_grad for p in tuned.parameters())  # free to be trained again
    every = train_classifier(crops, classes, init=start, **kw)
    assert not any(_same(a, b) for a, b in zip(every.members, joined.members, strict=True))


def test_the_loss_weighs_each_class_by_how_rare_it_is_and_absent_ones_not_at_all(monkeypatch):
    made: list[torch.nn.CrossEntropyLoss] = []
    real = torch.nn.CrossEntropyLoss

    def loss(*args, **kwargs):
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(torch.nn, "CrossEntropyLoss", loss)
    crops, _ = _crops(50)
    classes = np.array([0] * 40 + [3] * 10)
    train_classifier(crops, classes, epochs=1, batch=64, width=0.25, log=lambda _: None)
    # sqrt(50/40) and sqrt(50/10), over their mean: 1/3 and 2/3 of twice it
    expected = torch.tensor([2 / 3, 0, 0, 4 / 3, 0, 0, 0])
    torch.testing.assert_close(made[0].weight, expected)
    assert made[0].label_smoothing == 0.05


def test_evaluation_reads_every_crop_past_its_batches_of_512():
    model = _net(0.25)
    crops, _ = _crops(1100)
    with torch.no_grad():
        x = torch.from_numpy(crops[..., ::-1].copy()).permute(0, 3, 1, 2).float() / 255
        read = model(x).argmax(1).numpy()
    classes = read.copy()
    classes[700:] = (read[700:] + 1) % 7  # the last 400 read wrong
    assert evaluate_classifier(model, crops, classes) == pytest.approx(700 / 1100)


def test_the_export_reads_any_batch_at_its_size_as_the_network_does(tmp_path: Path):
    import onnxruntime as ort

    model = _net(0.25)
    out = export_classifier(model, tmp_path / "sub" / "f.onnx", size=32)
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    (inp,), (outp,) = session.get_inputs(), session.get_outputs()
    assert (inp.name, inp.shape[1:], outp.name) == ("images", [3, 32, 32], "logits")
    x = torch.rand(3, 3, 32, 32)
    (got,) = session.run(None, {"images": x.numpy()})
    with torch.no_grad():
        np.testing.assert_allclose(got, model(x).numpy(), atol=1e-4)
