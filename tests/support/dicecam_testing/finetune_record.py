"""``dicecam train --from`` with its training steps stood in for and what each was given
recorded: the photos each trained on (by name and content), the options each got, and the
figures of the evaluations (made-up: the starting detector's and the tuned one's differ)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import yaml

from .finetune import new_dice, stand_in_shipping, stand_in_training, starting_model
from .folders import yolo_folder

__all__ = ["STARTING", "TUNED", "own_name", "photos", "recorded_fine_tuning"]

STARTING = {"face_accuracy": 0.5, "recall": 0.6, "exact_accuracy": 0.25}
"""What a stand-in evaluation of the starting detector (a file ``start ...``) gives."""
TUNED = {"face_accuracy": 0.9, "recall": 0.95, "exact_accuracy": 0.75}
"""What a stand-in evaluation of the fine-tuned detector gives."""


def photos(folders: list[Path]) -> dict[str, str]:
    """Every photo under ``folders`` (links followed): its file name -> the SHA-1 of its bytes."""
    found = {}
    for folder in folders:
        for photo in sorted(Path(folder).rglob("*.jpg")):
            found[photo.name] = hashlib.sha1(photo.read_bytes()).hexdigest()
    return found


def own_name(linked: str) -> str:
    """A split's link ``00003_p3.jpg`` / ``replay00001_k1.jpg`` -> the photo's own name
    (``p3.jpg``, ``k1.jpg``); a name outside the split stays as it is."""
    return re.sub(r"^(replay|known)?\d{5}_", "", linked)


def _which(model: Path) -> str:
    """``starting`` or ``tuned``: which detector the file ``model`` is, by its bytes."""
    return "starting" if Path(model).read_bytes().startswith(b"start") else "tuned"


def _figures(which: str) -> dict[str, Any]:
    """Made-up figures of 4 photos, 8 dice: the starting detector's or the fine-tuned one's."""
    dice = {"matched_dice": 8, "predicted_dice": 8, "truth_dice": 8, "images": 4}
    return {**(STARTING if which == "starting" else TUNED), **dice}


def recorded_fine_tuning(
    monkeypatch, root: Path, *, one_class: bool = True, n_new: int = 6
) -> dict[str, Any]:
    """A fine-tuning run of ``n_new`` new photos (``new dice``, each with its own bytes, the faces
    1 to 6 in turn) and 4 known ones
    (the recipe's real folder, listed twice), made under ``root``. Returns a dict: ``argv`` (to
    run, with ``--detector``, ``--replay`` and ``--holdout`` still to add), ``base``, ``data``,
    ``known``, ``work`` (work/NAME), ``out``, and once run ``detector`` (the data.yaml read as
    training starts, the photos of its train folders, the options), ``faces`` (the photos of the
    face classifier's training and replay folders, its options and the recipe's epochs and
    learning rate), ``verifier`` (the photos the die check was calibrated on),
    ``model_at_start`` (what work/NAME/model held as training started) and ``evaluations``
    ((model, folder, ``starting`` or ``tuned``) of each)."""
    import vision.train.detector as detector
    import vision.train.finetune as finetune
    import vision.train.pipeline as pipeline
    import vision.train.run as run
    import vision.train.verify as verify
    from vision.train.recipe import Recipe

    stand_in_training(monkeypatch)
    stand_in_faces = pipeline.train_faces
    seen: dict[str, Any] = {"evaluations": []}
    work = root / "work"

    def train_detector(data_yaml, out_dir, **kwargs) -> Path:
        data = yaml.safe_load(Path(data_yaml).read_text(encoding="utf-8"))
        trained = photos([Path(d) for d in data["train"]])
        seen["detector"] = {"yaml": data, "photos": trained, "kwargs": kwargs}
        seen["model_at_start"] = sorted(p.name for p in (work / "mine-ft" / "model").rglob("*"))
        return Path(out_dir) / "best.pt"

    def train_faces(recipe, dirs, out_onnx, **kw) -> None:
        trained = [Path(d) for d in dirs] + [Path(d) for d in kw.get("replay_dirs") or []]
        seen["faces"] = {"photos": photos(trained), "kwargs": kw}
        seen["faces"].update(epochs=recipe.faces.epochs, lr=recipe.faces.lr)
        stand_in_faces(recipe, dirs, out_onnx, **kw)

    def calibrate_verifier(base, dirs, out) -> None:
        seen["verifier"] = {"photos": photos([Path(d) for d in dirs])}

    def evaluate_model(model, dataset, **kw) -> dict[str, Any]:
        seen["evaluations"].append((Path(model), Path(dataset), _which(model)))
        return _figures(_which(model))

    known = yolo_folder(root / "known", [f"k{i}" for i in range(4)])
    for i, photo in enumerate(sorted((known / "images").iterdir())):
        photo.write_bytes(f"known photo {i}".encode())
    monkeypatch.setattr(Recipe, "real_dirs", lambda self: [known, known])
    monkeypatch.setattr(detector, "train_detector", train_detector)
    stand_in_shipping(monkeypatch)
    monkeypatch.setattr(pipeline, "train_faces", train_faces)
    monkeypatch.setattr(verify, "calibrate_verifier", calibrate_verifier)
    monkeypatch.setattr(run, "evaluate_model", evaluate_model)
    monkeypatch.setattr(finetune, "_one_class", lambda onnx: one_class)  # a stand-in detector

    data = new_dice(root / "data")
    for i in range(6, n_new):
        label = yolo_folder(data, [f"p{i}"]) / "labels" / f"p{i}.txt"
        label.write_text(f"{i % 6} 0.5 0.5 0.1 0.1\n")
    for i, photo in enumerate(sorted((data / "images").iterdir())):
        photo.write_bytes(f"new photo {i}".encode())  # each photo told apart by its bytes too
    base = starting_model(root / "base")
    seen["argv"] = [
        *("train", "--from", str(base), "--data", str(data)),
        *("--out", str(root / "out"), "--work", str(work)),
    ]
    seen.update(base=base, data=data, known=known, work=work / "mine-ft", out=root / "out")
    return seen
