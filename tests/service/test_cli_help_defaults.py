"""What a command's ``--help`` says an option does when left out is what the command does.

Each of these said something else: ``dicecam label --help`` gave ``--model-version``'s default
as "the model's name; dicecam for convert" in both commands; ``dicecam tracker --help`` put the
database in "<data dir>" without saying which folder that is (the tracker takes no
``--data-dir``); ``dicecam calibrate --help`` did not say that storing a boundary writes no
preview; ``dicecam train --help`` asked for ``NAME-faces.pt`` beside a ``--from`` model, which
fine-tuning starts without.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from service.cli import build_parser, main

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "datasets" / "samples"


def helped(*command: str) -> dict[str, str]:
    """Each option's help text of ``dicecam COMMAND``, its lines joined."""
    parser = build_parser()
    for word in command:
        parser = next(
            a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"
        ).choices[word]
    return {o: " ".join((a.help or "").split()) for a in parser._actions for o in a.option_strings}


def model_versions(tasks: Path) -> set[str]:
    return {p["model_version"] for t in json.loads(tasks.read_text()) for p in t["predictions"]}


def test_label_and_convert_name_the_model_version_they_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DICECAM_BACKEND", "onnxruntime")
    photos = tmp_path / "photos"
    photos.mkdir()
    shutil.copy(SAMPLES / "roll-s21-035.jpg", photos)
    labelled = tmp_path / "labelled"
    assert main(["label", str(photos), "--out", str(labelled), "--no-progress"]) == 0
    assert model_versions(labelled / "tasks.json") == {"dicecam-reader"}
    said = helped("label")["--model-version"]
    assert "default: the model file's name, such as dicecam-reader)" in said

    back = tmp_path / "back"
    argv = ["labels", "convert", str(labelled / "tasks.json"), "--images-from", str(photos)]
    assert main([*argv, "--to", "labelstudio", "--out", str(back)]) == 0
    capsys.readouterr()
    assert model_versions(back / "tasks.json") == {"dicecam"}
    said = helped("labels", "convert")["--model-version"]
    assert "default: dicecam)" in said and "model file" not in said


def test_the_tracker_names_the_folder_its_database_is_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from service.tracker.db import default_database_url

    monkeypatch.delenv("DICECAM_TRACKER_DATABASE_URL", raising=False)
    monkeypatch.setenv("DICECAM_DATA_DIR", str(tmp_path))
    assert default_database_url() == f"sqlite:///{tmp_path / 'tracker.sqlite3'}"
    said = helped("tracker")["--database-url"]
    assert "else tracker.sqlite3 in the data dir: DICECAM_DATA_DIR, else ~/.dicecam)" in said


def test_calibrate_writes_a_preview_of_a_proposal_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DICECAM_DATA_DIR", str(tmp_path / "data"))
    shutil.copy(SAMPLES / "roll-s21-035.jpg", tmp_path / "photo.jpg")
    points = ["--points", "40,30", "600,25", "630,470", "10,460"]
    assert main(["calibrate", "photo.jpg", *points]) == 0
    assert (tmp_path / "data" / "calibration.json").is_file()
    assert not list(tmp_path.glob("*.png"))  # a boundary stored: no preview
    assert main(["calibrate", "photo.jpg"]) == 0
    assert [p.name for p in tmp_path.glob("*.png")] == ["photo-calibration.png"]
    capsys.readouterr()
    said = helped("calibrate")["--show"]
    assert "PHOTO-calibration.png in the current folder for a proposal" in said
    assert "none when --points or --accept stores a boundary" in said


def test_train_from_needs_no_face_classifier_weights(tmp_path: Path) -> None:
    from vision.train.start import starting_model

    for suffix in (".onnx", ".pt"):
        (tmp_path / f"mine{suffix}").write_bytes(b"")
    onnx, pt = tmp_path / "mine.onnx", tmp_path / "mine.pt"
    assert starting_model(tmp_path / "mine") == (onnx, pt)  # no mine-faces.pt asked for
    said = helped("train")["--from"]
    assert "NAME.onnx (or NAME) with its detector checkpoint NAME.pt" in said
    assert "NAME-faces.pt when that is there too, else it is trained anew" in said
