"""Fine-tuning's detector choice on figures made up for the test (vision.train.finetune):
the known photos are measured and can overrule the held-out ones, the starting detector is put
back whole when it stays, and a detector's class count is read from its export."""

from __future__ import annotations

from pathlib import Path

import pytest


def _figures(right: int, dice: int = 40) -> dict:
    return {
        "face_accuracy": right / dice,
        "matched_dice": dice,
        "predicted_dice": dice,
        "truth_dice": dice,
        "images": 10,
        "exact_accuracy": 0.5,
    }


@pytest.fixture
def models(tmp_path: Path) -> tuple[Path, Path]:
    """A starting detector and a fine-tuned one with its face classifier, die check and
    cocked-die model, each file holding its folder's name and its own."""
    base, tuned = tmp_path / "base" / "m.onnx", tmp_path / "out" / "m.onnx"
    for path in (base, base.with_suffix(".pt"), tuned, tuned.with_suffix(".pt")):
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(f"{path.parent.name} {path.name}".encode())
    for name in ("m-faces.onnx", "m-verify.onnx", "m-cocked.onnx"):
        (tuned.parent / name).write_bytes(f"tuned {name}".encode())
    return base, tuned


def _measured(monkeypatch, scores: dict[tuple[str, str], int]) -> list[tuple[str, str]]:
    import vision.train.run as run

    asked = []

    def evaluate_model(model, folder, split):
        key = (Path(model).parent.name, Path(folder).name)
        asked.append(key)
        return _figures(scores[key])

    monkeypatch.setattr(run, "evaluate_model", evaluate_model)
    return asked


def test_a_detector_better_on_held_out_photos_but_forgetting_known_ones_is_put_back(
    tmp_path, models, monkeypatch
):
    from vision.train.finetune import _choose_detector

    base, tuned = models
    known = tmp_path / "known"
    (known / "images").mkdir(parents=True)
    (known / "images" / "k.jpg").write_bytes(b"k")
    scores = {
        ("out", "held"): 38,
        ("trial", "held"): 30,
        ("out", "known"): 20,
        ("trial", "known"): 40,
    }
    asked = _measured(monkeypatch, scores)
    note, held = _choose_detector(base, tuned, tmp_path / "held", tmp_path / "trial", known)
    assert asked == [("out", "held"), ("trial", "held"), ("out", "known"), ("trial", "known")]
    assert "but it forgot known dice: score on known photos 20 against 40" in note
    assert held == _figures(30)  # the figures of the detector now at --out: the starting one
    assert tuned.read_bytes() == b"base m.onnx" and tuned.with_suffix(".pt").read_bytes() == (
        b"base m.pt"
    )
    # the starting detector was measured with the new face classifier and side models
    for name in ("m-faces.onnx", "m-verify.onnx", "m-cocked.onnx"):
        assert (tmp_path / "trial" / name).read_bytes() == f"tuned {name}".encode()


def test_a_detector_better_on_held_out_and_known_photos_is_kept(tmp_path, models, monkeypatch):
    from vision.train.finetune import _choose_detector

    base, tuned = models
    known = tmp_path / "known"
    (known / "images").mkdir(parents=True)
    (known / "images" / "k.jpg").write_bytes(b"k")
    scores = {
        ("out", "held"): 38,
        ("trial", "held"): 30,
        ("out", "known"): 40,
        ("trial", "known"): 40,
    }
    asked = _measured(monkeypatch, scores)
    note, held = _choose_detector(base, tuned, tmp_path / "held", tmp_path / "trial", known)
    assert len(asked) == 4 and note.startswith("the fine-tuned one (held-out score 38")
    assert held == _figures(38) and tuned.read_bytes() == b"out m.onnx"


def _detector(path: Path, names: str | None) -> Path:
    import onnx
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    if names is not None:
        helper.set_model_props(model, {"names": names})
    onnx.save(model, path)
    return path


@pytest.mark.parametrize(
    ("names", "one"),
    [("{0: 'die'}", True), ("{0: '1', 1: '2'}", False), ("{}", False), ("not a dict {", False)],
)
def test_a_detector_finds_dice_only_when_its_export_names_one_class(tmp_path, names, one):
    from vision.train.finetune import _one_class

    assert _one_class(_detector(tmp_path / "d.onnx", names)) is one
