"""What `train_faces` trains the face classifier on and what it ships: the new crops repeated
so the replay crops are about ``replay_share`` of each epoch (none at a share of 0), the
trained model joined as the last member, the ONNX file int8 when the recipe says so, and the
float ``.pt`` beside it. Tiny networks, one epoch; the real training runs, watched."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

if importlib.util.find_spec("torch") is None:
    pytest.skip("training needs the [train] extra (torch)", allow_module_level=True)

import torch  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def sets(tmp_path_factory) -> tuple[Path, Path]:
    """A YOLO folder of new dice (2 photos) and one of dice already known (6 photos)."""
    from vision.synth import write_dataset

    root = tmp_path_factory.mktemp("faces")
    write_dataset(root / "new", 2, seed=21, size=(160, 160), val_fraction=0.0)
    write_dataset(root / "old", 6, seed=22, size=(160, 160), val_fraction=0.0)
    return root / "new" / "images", root / "old" / "images"


def _recipe(**faces):
    from vision.train.recipe import Recipe

    base = {"epochs": 1, "batch": 64, "jitter": 1, "width": 0.25, "int8": False}
    return Recipe.model_validate({"faces": base | faces})


@pytest.fixture
def trained(monkeypatch) -> list[dict]:
    """Each call of the real train_classifier: its crops, classes, options and the model."""
    import vision.train.classifier as classifier

    calls: list[dict] = []
    real = classifier.train_classifier

    def watched(crops, classes, **kw):
        model = real(crops, classes, **kw)
        calls.append({"x": crops, "y": classes, "kw": kw, "model": model})
        return model

    monkeypatch.setattr(classifier, "train_classifier", watched)
    return calls


def test_replay_crops_fill_about_their_share_of_each_epoch(sets, trained, tmp_path: Path):
    from vision.train.crops import load_crops
    from vision.train.pipeline import train_faces

    new, old = sets
    nx, ny = load_crops([new], jitter=1)  # the recipe's jitter for the new dice
    ox, oy = load_crops([old], jitter=0)  # the known ones as they are
    share = 0.25
    repeat = max(1, round(len(ox) * (1 - share) / (share * len(nx))))
    assert repeat > 2  # else the mixing below would not show
    logs: list[str] = []
    train_faces(
        _recipe(),
        [new],
        tmp_path / "f.onnx",
        replay_dirs=[old],
        replay_share=share,
        val_dirs=[old],
        log=logs.append,
    )
    (call,) = trained
    np.testing.assert_array_equal(call["x"], np.concatenate([np.tile(nx, (repeat, 1, 1, 1)), ox]))
    np.testing.assert_array_equal(call["y"], np.concatenate([np.tile(ny, repeat), oy]))
    assert abs(len(ox) / len(call["x"]) - share) < 0.1
    assert f"+ {len(ox)} replay crops, new crops repeated {repeat}x" in "\n".join(logs)
    val_x, val_y = call["kw"]["val"]
    np.testing.assert_array_equal(val_x, ox)
    np.testing.assert_array_equal(val_y, oy)
    assert any(" val acc " in line for line in logs)


def test_a_replay_share_of_0_trains_on_the_new_crops_only(sets, trained, tmp_path: Path):
    from vision.train.crops import load_crops
    from vision.train.pipeline import train_faces

    new, old = sets
    logs: list[str] = []
    out = train_faces(
        _recipe(), [new], tmp_path / "f.onnx", replay_dirs=[old], replay_share=0.0, log=logs.append
    )
    assert out.is_file()
    np.testing.assert_array_equal(trained[0]["x"], load_crops([new], jitter=1)[0])
    assert not any("replay" in line for line in logs)
    for share in (-0.1, 1.0):
        with pytest.raises(ValueError, match=rf"expected 0 <= replay_share < 1, got {share}"):
            train_faces(
                _recipe(), [new], tmp_path / "x.onnx", replay_dirs=[old], replay_share=share
            )
    assert not (tmp_path / "x.onnx").exists()


def test_the_trained_model_joins_as_the_last_member(sets, trained, tmp_path: Path):
    from vision.train.classifier import load_classifier
    from vision.train.pipeline import train_faces

    new, _ = sets
    first = train_faces(_recipe(), [new], tmp_path / "a.onnx", seed=1, log=print)
    joined = train_faces(
        _recipe(), [new], tmp_path / "j.onnx", seed=2, join=[first.with_suffix(".pt")], log=print
    )
    members = load_classifier(joined.with_suffix(".pt")).members
    kept, new_model = load_classifier(first.with_suffix(".pt")), trained[-1]["model"]
    for member, model in ((members[0], kept), (members[1], new_model)):
        state = model.state_dict()
        assert all(torch.equal(v, state[k]) for k, v in member.state_dict().items())
        assert member.width == 0.25  # the recipe's width


def test_the_onnx_file_is_int8_when_the_recipe_says_so_and_the_pt_stays_float(
    sets, trained, tmp_path: Path
):
    from vision.faces import FaceClassifier
    from vision.train.classifier import load_classifier
    from vision.train.pipeline import train_faces
    from vision.train.quantize import is_int8

    new, _ = sets
    q = train_faces(_recipe(int8=True), [new], tmp_path / "q.onnx", log=print)
    f = train_faces(_recipe(int8=False), [new], tmp_path / "f.onnx", log=print)
    meta = FaceClassifier(q)._model.metadata
    assert is_int8(meta) and not is_int8(FaceClassifier(f)._model.metadata)
    assert meta["int8"] == f"calibration crops: {len(trained[0]['x'])}"  # the training crops
    assert q.with_suffix(".pt").is_file() and f.with_suffix(".pt").is_file()
    saved = load_classifier(q.with_suffix(".pt"))
    assert all(p.dtype == torch.float32 for p in saved.parameters())
    state = trained[0]["model"].state_dict()
    assert all(torch.equal(v, state[k]) for k, v in saved.state_dict().items())


@pytest.mark.slow
def test_shipping_a_detector_keeps_its_checkpoint_beside_the_export(tmp_path: Path):
    pytest.importorskip("ultralytics", reason="exporting a detector needs ultralytics")
    import onnxruntime as ort

    from vision.train.pipeline import ship_detector

    weights = Path(__file__).resolve().parents[2] / "models" / "dicecam-reader.pt"
    out = ship_detector(weights, tmp_path / "d.onnx", imgsz=128)
    assert out == tmp_path / "d.onnx"
    assert out.with_suffix(".pt").read_bytes() == weights.read_bytes()  # fine-tuned from later
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    assert session.get_modelmeta().custom_metadata_map["imgsz"] == "[128, 128]"


def test_a_labelled_photo_it_cannot_read_is_said_not_passed_over(sets, trained, tmp_path: Path):
    """Its dice drop out of the training: the log names it (it said nothing)."""
    import shutil

    from vision.train.pipeline import train_faces

    new, _ = sets
    folder = tmp_path / "new"
    shutil.copytree(new.parent, folder)
    broken = folder / "images" / "broken.png"
    broken.write_bytes(b"not a png")
    (folder / "labels" / "broken.txt").write_text("1 0.5 0.5 0.2 0.2\n")
    logs: list[str] = []
    train_faces(_recipe(), [folder / "images"], tmp_path / "f.onnx", log=logs.append)
    said = [line for line in logs if "not readable" in line]
    assert said == [f"face classifier: 1 labelled photo not readable, left out: {broken}"]
    assert len(trained) == 1  # trained on the photos it could read
