"""One check for a model file: the reader's model (``DiceReader``, ``DICECAM_MODEL``,
``--model``) and the ``DICECAM_*_MODEL`` settings refuse a path with the same message, naming
the model they expected, and each refuses every kind of path the other did."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from pydantic import ValidationError

from vision.config import VisionSettings
from vision.reader import DiceReader, ModelError

from dicecam_testing.cli import ROOT

MODELS = ROOT / "models"


@pytest.fixture
def bad(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Paths that name no ONNX model, each with what the check says of it."""
    fifo = tmp_path / "pipe.onnx"
    os.mkfifo(fifo)
    folder = tmp_path / "runs"
    folder.mkdir()
    for name in ("mine.onnx", "mine-faces.onnx", "notes.txt"):
        (folder / name).write_bytes(b"x")
    checkpoint = tmp_path / "mine.pt"
    shutil.copyfile(MODELS / "dicecam-reader-faces.pt", checkpoint)
    return {
        "missing": (tmp_path / "gone.onnx", "no such file"),
        "fifo": (fifo, "not a regular file"),
        "checkpoint": (
            checkpoint,
            "a PyTorch checkpoint, for training, not its ONNX export: mine.onnx beside it, if it "
            "is there",
        ),
        "folder": (tmp_path, "a folder; it holds pipe.onnx"),
    }


@pytest.mark.parametrize("which", ["missing", "fifo", "checkpoint", "folder"])
def test_the_reader_and_a_setting_say_the_same_of_a_path_that_is_no_model(which, bad, monkeypatch):
    """The reader called a FIFO 'not found', and a setting took a checkpoint (refused only at
    the first photo, as a file onnxruntime cannot load)."""
    path, why = bad[which]
    with pytest.raises(ModelError) as caught:
        DiceReader(path, warmup=False)
    assert str(caught.value) == (
        f"expected the reader model (an ONNX file), got '{path}' ({why}): point DICECAM_MODEL "
        "(or --model) at a detector's ONNX export (`dicecam train` makes one)"
    )
    monkeypatch.setenv("DICECAM_FACES_MODEL", str(path))
    with pytest.raises(ValidationError) as invalid:
        VisionSettings()
    said = invalid.value.errors()[0]["msg"]
    assert said == f"Value error, expected the face classifier (an ONNX file), got '{path}' ({why})"


def test_a_folder_names_the_models_in_it_and_the_reader_only_its_detectors(
    tmp_path, bad, monkeypatch
):
    folder = tmp_path / "runs"
    with pytest.raises(ModelError, match=r"\(a folder; it holds mine\.onnx\): point DICECAM_MODEL"):
        DiceReader(folder, warmup=False)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ModelError, match=r"\(a folder with no \.onnx in it\): point"):
        DiceReader(empty, warmup=False)
    monkeypatch.setenv("DICECAM_VERIFY_MODEL", str(folder))
    with pytest.raises(
        ValidationError, match=r"\(a folder; it holds mine-faces\.onnx, mine\.onnx\)"
    ):
        VisionSettings()


def test_a_model_is_loaded_once_per_file_and_options_and_again_once_the_file_changes(
    tmp_path, monkeypatch
):
    from collections import OrderedDict

    from vision import model_files

    monkeypatch.setattr(model_files, "_kept", OrderedDict())
    model = tmp_path / "m.onnx"
    model.write_bytes(b"first")
    made: list[object] = []

    def load() -> object:
        made.append(object())
        return made[-1]

    first = model_files.kept_model(model, ("outline", 2), load)
    assert model_files.kept_model(tmp_path / "." / "m.onnx", ("outline", 2), load) is first
    assert model_files.kept_model(model, ("outline", 1), load) is made[1]  # other threads
    model.write_bytes(b"second, longer")  # written over (fine-tuned): loaded anew
    assert model_files.kept_model(model, ("outline", 2), load) is made[2] is not first

    def broken() -> object:
        raise ValueError("cannot load it")

    other = tmp_path / "other.onnx"
    other.write_bytes(b"x")
    with pytest.raises(ValueError, match="cannot load it"):
        model_files.kept_model(other, (), broken)
    assert model_files.kept_model(other, (), load) is made[3]  # the failure was not kept
    monkeypatch.setattr(model_files, "MODELS_KEPT", 2)
    model_files.kept_model(model, ("outline", 3), load)  # the oldest two go
    assert model_files.kept_model(model, ("outline", 2), load) is made[5]
    assert len(model_files._kept) == 2


def test_an_old_pickle_checkpoint_and_a_blank_path_are_refused_as_such(tmp_path):
    from vision.model_files import check_model_file

    old = tmp_path / "old.pt"
    old.write_bytes(b"\x80\x02}q\x00.")  # torch.save(..., _use_new_zipfile_serialization=False)
    with pytest.raises(ValueError, match=r"\(a PyTorch checkpoint, for training"):
        check_model_file(old, "face classifier")
    with pytest.raises(
        ValueError, match=r"^expected the face classifier \(an ONNX file\), got ' ' \(empty\)$"
    ):
        check_model_file(" ", "face classifier")


def test_kept_models_go_least_recently_used_first_and_a_rewrite_of_one_size_loads_anew(
    tmp_path, monkeypatch
):
    from collections import OrderedDict

    from vision import model_files

    monkeypatch.setattr(model_files, "_kept", OrderedDict())
    monkeypatch.setattr(model_files, "MODELS_KEPT", 2)
    model = tmp_path / "m.onnx"
    model.write_bytes(b"first")
    made: list[object] = []

    def load() -> object:
        made.append(object())
        return made[-1]

    a = model_files.kept_model(model, ("a",), load)
    b = model_files.kept_model(model, ("b",), load)
    assert model_files.kept_model(model, ("a",), load) is a  # used again: the newest
    model_files.kept_model(model, ("c",), load)  # b, the least recently used, goes
    assert model_files.kept_model(model, ("a",), load) is a
    assert model_files.kept_model(model, ("b",), load) is not b
    # written over in place with as many bytes (same file, same size): a new modification time
    with open(model, "r+b") as f:
        f.write(b"other")
    os.utime(model, ns=(1, 1))
    assert model_files.kept_model(model, ("a",), load) is not a
