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


def test_eval_of_a_data_yaml_reads_and_names_the_split_asked_for(
    model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A data.yaml says where each split lies (inside images/ or not): --split picks which."""
    ds = tmp_path / "ds"
    _photo(ds / "images" / "val", ds / "labels" / "val", "v0")
    for name in ("t0", "t1"):
        _photo(ds / "images" / "test", ds / "labels" / "test", name)
    (ds / "data.yaml").write_text("val: images/val\ntest: images/test\n")
    args = ["eval", str(ds / "data.yaml"), "--model", str(model), "--split", "test"]
    assert main(args) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith("data.yaml (split test)")
    assert main([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["split"], data["images"]) == ("test", 2)


def test_eval_lists_the_photos_not_read_exactly_only_with_mistakes(
    model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = tmp_path / "ds"
    _photo(ds / "images", ds / "labels", "p0")
    (ds / "labels" / "p0.txt").write_text("1 0.5 0.5 0.125 0.125\n")  # a 2; the model reads a 5
    args = ["eval", str(ds), "--model", str(model)]
    assert main(args) == 0
    assert "not read exactly" not in capsys.readouterr().out
    assert main([*args, "--mistakes"]) == 0
    out = capsys.readouterr().out
    assert "not read exactly:" in out and "p0" in out.split("not read exactly:")[1]


def test_eval_refuses_a_limit_of_zero(model: Path, tmp_path: Path, capsys) -> None:
    ds = tmp_path / "ds"
    _photo(ds / "images", ds / "labels", "p0")
    assert main(["eval", str(ds), "--model", str(model), "--limit", "0"]) == 2
    assert "--limit must be at least 1, got 0" in capsys.readouterr().err
