"""``dicecam labels import`` ends with the command that fine-tunes on what it wrote; its
``--from`` names the shipped model as seen from where it runs (it said
``models/dicecam-reader.onnx`` in any folder, which is there only at a clone's root)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from PIL import Image

from service.cli import main

REPO = Path(__file__).resolve().parents[2]


def _one_labelled_photo(yolo: Path) -> Path:
    """A YOLO folder of one photo of one die (a 5)."""
    (yolo / "images").mkdir(parents=True)
    (yolo / "labels").mkdir()
    Image.new("RGB", (64, 48), "white").save(yolo / "images" / "roll.jpg")
    (yolo / "labels" / "roll.txt").write_text("4 0.5 0.5 0.25 0.3\n")
    return yolo


@pytest.mark.parametrize("where", ["photos' folder", "clone"])
def test_the_fine_tune_hint_names_a_model_that_is_there(
    where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    yolo = _one_labelled_photo(tmp_path / "labelled")
    monkeypatch.chdir(tmp_path if where == "photos' folder" else REPO)
    out = tmp_path / "my dice"
    assert main(["labels", "import", str(yolo), "--out", str(out)]) == 0
    hint = capsys.readouterr().out.splitlines()[-1]
    assert hint.startswith("fine-tune on it with: dicecam train --from "), hint
    words = shlex.split(hint.split(": ", 1)[1])
    model, data = (Path(words[words.index(option) + 1]) for option in ("--from", "--data"))
    assert model.is_file() and model.with_suffix(".pt").is_file(), hint  # what --from needs
    assert (data / "data.yaml").is_file(), hint
    if where == "clone":
        assert model == Path("models/dicecam-reader.onnx")


def test_one_photo_of_one_die_is_said_in_the_singular(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said "imported 1 photos (1 dice)" and "converted 1 photos"."""
    yolo = _one_labelled_photo(tmp_path / "labelled")
    assert main(["labels", "import", str(yolo), "--out", str(tmp_path / "in")]) == 0
    assert capsys.readouterr().out.startswith("imported 1 photo (1 die) -> ")
    out = tmp_path / "coco"
    assert main(["labels", "convert", str(yolo), "--to", "coco", "--out", str(out)]) == 0
    assert capsys.readouterr().out.startswith("converted 1 photo to coco -> ")
