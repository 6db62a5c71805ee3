"""``dicecam eval`` says which photos it read: a split, or all of ``images/`` in a folder that
has no split folder for ``--split``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from service.cli import main

pytest.importorskip("onnx", reason="the onnx package builds the test model")
from dicecam_testing import onnx_models as models  # noqa: E402


@pytest.fixture
def model(tmp_path: Path) -> Path:
    """A model that finds one 5 in the middle of any 320x320 photo."""
    return models.make_model(tmp_path / "m.onnx", models.raw_preds([(160, 160, 40, 40, {4: 0.9})]))


def _photo(images: Path, labels: Path, name: str) -> None:
    images.mkdir(parents=True, exist_ok=True)
    labels.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (320, 320), (90, 90, 90)).save(images / f"{name}.png")
    (labels / f"{name}.txt").write_text("4 0.5 0.5 0.125 0.125\n")


@pytest.mark.parametrize(
    ("folders", "argv", "said", "split"),
    [
        # images/ and labels/ directly: the split is not used
        ([""], [], "(all of images/: it has no val split folder)", None),
        ([""], ["--split", "test"], "(all of images/: it has no test split folder)", None),
        # photos in folders of their own, none a split's: all of them too
        (["batch1", "batch2"], [], "(all of images/: it has no val split folder)", None),
        # images/valid/ is the val split's (and images/train/ is left out)
        (["valid", "train"], [], "(split val)", "val"),
        # photos beside images/val/: the split's folder is read
        (["", "val"], [], "(split val)", "val"),
    ],
)
def test_eval_says_whether_it_read_a_split_or_all_of_images(
    folders: list[str],
    argv: list[str],
    said: str,
    split: str | None,
    model: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    ds = tmp_path / "ds"
    for n, folder in enumerate(folders):
        _photo(ds / "images" / folder, ds / "labels" / folder, f"p{n}")
    args = ["eval", str(ds), "--model", str(model), *argv]
    assert main(args) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == f"dataset           {ds} {said}"
    assert main([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["split"] == split
    assert data["images"] == (1 if split else len(folders))  # what was read, all of it or not
