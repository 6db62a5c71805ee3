"""Where ``dicecam train --from`` finds its starting model's files (``starting_model``): the
export and the detector checkpoint beside it, whichever of the two is named."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from vision.train.start import starting_model


def _files(folder: Path, *names: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_bytes(b"model")
    return folder


def test_the_export_its_checkpoint_or_its_name_alone_each_name_the_model(tmp_path):
    folder = _files(tmp_path / "m", "mine.onnx", "mine.pt")
    expected = (folder / "mine.onnx", folder / "mine.pt")
    for named in ("mine.onnx", "mine.pt", "mine"):
        assert starting_model(folder / named) == expected


def test_an_export_without_its_checkpoint_is_refused_naming_the_checkpoint(tmp_path):
    folder = _files(tmp_path / "m", "mine.onnx")
    with pytest.raises(FileNotFoundError) as caught:
        starting_model(folder / "mine.onnx")
    said = str(caught.value)
    assert said == f"--from needs {folder / 'mine.pt'} (the exported model and its checkpoint)"


def test_a_folder_is_refused_naming_the_models_in_it_that_have_both_files(tmp_path):
    folder = _files(tmp_path / "m", "a.onnx", "a.pt", "b.onnx", "c.pt")
    with pytest.raises(FileNotFoundError, match=r"got the folder .*m \(it holds a.onnx\)$"):
        starting_model(folder)


MODELS = Path(__file__).resolve().parents[2] / "models"


@pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("ultralytics", "torch")),
    reason="the train extra (ultralytics, torch)",
)
def test_a_checkpoint_of_another_kind_or_of_another_detector_is_refused(tmp_path):
    """``check_starting_model``: a .pt whose 'model' is not a YOLO detector, or a detector of
    another number of classes than the export beside it, is said, not trained from."""
    import torch
    from torch import nn

    from vision.reader import ModelError
    from vision.train.start import check_starting_model

    for suffix in (".onnx", "-faces.onnx"):  # the shipped export: the reader loads it
        (tmp_path / f"m{suffix}").write_bytes((MODELS / f"dicecam-reader{suffix}").read_bytes())
    base = tmp_path / "m.onnx"
    torch.save({"model": nn.Linear(1, 1)}, tmp_path / "m.pt")
    with pytest.raises(ModelError, match="expected m.pt to be a YOLO detector checkpoint"):
        check_starting_model(base)
    saved = torch.load(MODELS / "dicecam-reader.pt", map_location="cpu", weights_only=False)
    detector = saved.get("ema") or saved["model"]
    classes = len(detector.names)
    detector.names = {k: str(k + 1) for k in range(classes + 5)}
    torch.save(saved, tmp_path / "m.pt")
    with pytest.raises(ModelError, match=f"of {classes + 5} classes \\(m.onnx: {classes}\\)"):
        check_starting_model(base)
