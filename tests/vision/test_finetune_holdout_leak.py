"""`dicecam train --from` never trains on its held-out photos: the figures it prints (and issue
#8's "N% on held-out photos") are of photos neither the detector nor the face classifier saw.
And a run stopped halfway leaves no file in the work folder that the next run would publish.
Training is stood in for; what each step would train on is read from its inputs."""

from __future__ import annotations

import hashlib
import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

if any(importlib.util.find_spec(m) is None for m in ("ultralytics", "torch")):
    pytest.skip("dicecam train needs the [train] extra", allow_module_level=True)

from service.cli import main  # noqa: E402

from dicecam_testing.finetune import new_dice, stand_in_training, starting_model  # noqa: E402
from dicecam_testing.folders import yolo_folder  # noqa: E402


def _photos(folders: list[Path]) -> dict[str, str]:
    """Every photo under ``folders`` (links followed): its file name -> the SHA-1 of its bytes."""
    found = {}
    for folder in folders:
        for photo in sorted(Path(folder).rglob("*.jpg")):
            found[photo.name] = hashlib.sha1(photo.read_bytes()).hexdigest()
    return found


def _own_name(linked: str) -> str:
    """A split's link ``00003_p3.jpg`` / ``replay00001_k1.jpg`` -> the photo's own name
    (``p3.jpg``, ``k1.jpg``); a name outside the split stays as it is."""
    return re.sub(r"^(replay|known)?\d{5}_", "", linked)


@pytest.fixture
def run_recorded(tmp_path: Path, monkeypatch) -> dict[str, Any]:
    """A fine-tuning run (``--detector tune``, 2 replay photos) with each training step's inputs
    recorded: ``detector`` (the data.yaml's contents and the photos of its train folders, read
    when training starts), ``faces`` (the photos of the face classifier's training and replay
    folders) and ``model_at_start`` (what the work folder's model/ held when training began)."""
    import vision.train.detector as detector
    import vision.train.finetune as finetune
    import vision.train.pipeline as pipeline
    from vision.train.recipe import Recipe

    stand_in_training(monkeypatch)
    stand_in_faces = pipeline.train_faces
    seen: dict[str, Any] = {}
    work = tmp_path / "work"

    def train_detector(data_yaml, out_dir, **kwargs) -> Path:
        data = yaml.safe_load(Path(data_yaml).read_text(encoding="utf-8"))
        seen["detector"] = {"yaml": data, "photos": _photos([Path(d) for d in data["train"]])}
        seen["model_at_start"] = sorted(p.name for p in (work / "mine-ft" / "model").rglob("*"))
        return Path(out_dir) / "best.pt"

    def ship_detector(weights, onnx, *, imgsz):
        Path(onnx).parent.mkdir(parents=True, exist_ok=True)
        Path(onnx).write_bytes(b"tuned detector")
        Path(onnx).with_suffix(".pt").write_bytes(b"tuned weights")
        return onnx

    def train_faces(recipe, dirs, out_onnx, **kw) -> None:
        trained = [Path(d) for d in dirs] + [Path(d) for d in kw.get("replay_dirs") or []]
        seen["faces"] = {"dirs": trained, "photos": _photos(trained)}
        stand_in_faces(recipe, dirs, out_onnx, **kw)

    known = yolo_folder(tmp_path / "known", [f"k{i}" for i in range(4)])
    for i, photo in enumerate(sorted((known / "images").iterdir())):
        photo.write_bytes(f"known photo {i}".encode())
    monkeypatch.setattr(Recipe, "real_dirs", lambda self: [known])
    monkeypatch.setattr(detector, "train_detector", train_detector)
    monkeypatch.setattr(pipeline, "ship_detector", ship_detector)
    monkeypatch.setattr(pipeline, "train_faces", train_faces)
    monkeypatch.setattr(finetune, "_one_class", lambda onnx: True)  # a stand-in detector

    data = new_dice(tmp_path / "data")
    for i, photo in enumerate(sorted((data / "images").iterdir())):
        photo.write_bytes(f"new photo {i}".encode())  # each photo told apart by its bytes too
    seen["argv"] = [
        *("train", "--from", str(starting_model(tmp_path / "base")), "--data", str(data)),
        *("--out", str(tmp_path / "out"), "--work", str(work), "--detector", "tune"),
        *("--replay", "2", "--holdout", "0.34"),
    ]
    seen["work"], seen["out"] = work / "mine-ft", tmp_path / "out"
    return seen


def test_no_held_out_photo_is_trained_on_by_name_or_content(run_recorded, capsys):
    """The held-out photos are the fine-tuned model's only honest figure on the new dice: one in
    the detector's data.yaml or the face classifier's folders makes it a figure on seen photos."""
    assert main(run_recorded["argv"]) == 0, capsys.readouterr().err
    held_dir = run_recorded["work"] / "split" / "heldout" / "images"
    held = {_own_name(n): digest for n, digest in _photos([held_dir]).items()}
    assert held and f"{len(held)} held out" in capsys.readouterr().out

    for step in ("detector", "faces"):
        trained = {_own_name(n): digest for n, digest in run_recorded[step]["photos"].items()}
        assert not held.keys() & trained.keys(), step
        assert not set(held.values()) & set(trained.values()), step
        # the other new photos and the 2 replayed known ones (the classifier: all 4 known)
        assert len([n for n in trained if n.startswith("p")]) == 6 - len(held), step
        assert len([n for n in trained if n.startswith("k")]) == (2 if step == "detector" else 4)
    data = run_recorded["detector"]["yaml"]
    assert data["val"] == str(held_dir)
    assert str(held_dir) not in data["train"]


def test_a_stopped_runs_model_folder_is_emptied_before_training_and_never_published(
    run_recorded, capsys
):
    """A run stopped after its die check was made left work/NAME/model/NAME-verify.onnx; the next
    run (of a starting model with no die check) would put it into --out beside its new model."""
    stale = run_recorded["work"] / "model"
    stale.mkdir(parents=True)
    (stale / "mine-ft-verify.onnx").write_bytes(b"a stopped run's die check")
    (stale / "mine-ft-faces.onnx").write_bytes(b"a stopped run's faces")
    assert main(run_recorded["argv"]) == 0, capsys.readouterr().err
    assert run_recorded["model_at_start"] == []
    out = run_recorded["out"]
    assert not (out / "mine-ft-verify.onnx").exists()
    assert (out / "mine-ft-faces.onnx").read_bytes() == b"new faces"
    assert (out / "mine-ft.onnx").read_bytes() == b"tuned detector"
