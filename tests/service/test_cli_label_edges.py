"""``dicecam label`` and ``dicecam labels``: --out the photos' own folder, a staging folder of a
run still going left alone, and a YOLO folder without labels said in one line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PIL import Image

from dicecam_testing.cli import run_in_process as run

pytest.importorskip("onnx", reason="the onnx package builds the test model")
from dicecam_testing import onnx_models as models  # noqa: E402


@pytest.fixture
def photos(tmp_path: Path) -> Path:
    folder = tmp_path / "photos"
    folder.mkdir()
    Image.new("RGB", (320, 240), (40, 120, 40)).save(folder / "a.jpg")
    return folder


def test_out_the_photos_own_folder_or_one_holding_it_is_refused_in_every_format(
    capsys, photos, tmp_path
):
    # Photos under --out are left out of labelling (a rerun must not label its own copies):
    # with --out PHOTOS or a folder above it, every photo was left out, and the run wrote its
    # labels among the photos and said "labelled 0 of 0 photos" (exit 1).
    model = str(tmp_path / "none.onnx")
    for out, what in ((photos, "PHOTOS itself"), (tmp_path, "a folder that holds PHOTOS")):
        for extra in (["--images", "copy"], ["--images", "link"], ["--format", "yolo"], []):
            argv = ["label", str(photos), "--out", str(out), *extra, "--overwrite"]
            code, stdout, err = run(capsys, *argv, "--model", model)
            assert (code, stdout) == (2, ""), extra
            expected = f"--out must differ from PHOTOS and not hold it, got {what}: {out}"
            assert err == f"dicecam label: error: {expected}\n"
            assert sorted(p.name for p in photos.iterdir()) == ["a.jpg"]
            assert sorted(p.name for p in tmp_path.iterdir()) == ["photos"]


def test_a_staging_folder_of_a_run_still_going_is_left_alone(capsys, photos, tmp_path):
    model = models.make_model(tmp_path / "m.onnx", models.raw_preds([(160, 160, 40, 40, {4: 0.9})]))
    going = tmp_path / f".labelled.{os.getppid()}.partial"  # pytest's parent: running
    going.mkdir()
    (going / "half.txt").write_text("being written")
    out = tmp_path / "labelled"

    argv = ["label", str(photos), "--out", str(out), "--model", str(model), "--no-progress"]
    code, stdout, err = run(capsys, *argv)

    assert (code, err) == (0, "")
    # the files are named where they are, in --out, not in this run's staging folder
    assert ".partial" not in stdout + (out / "summary.json").read_text()
    assert f"-> {out}{os.sep}" in stdout
    assert (going / "half.txt").read_text() == "being written"
    assert out.is_dir()


def test_a_yolo_folder_without_labels_is_one_line_naming_it(capsys, tmp_path):
    source = tmp_path / "yolo"
    source.mkdir()
    out = tmp_path / "out"
    for action in (["import"], ["convert", "--to", "coco"]):
        code, stdout, err = run(
            capsys, "labels", *action, str(source), "--from", "yolo", "--out", str(out)
        )
        assert (code, stdout) == (2, "")
        assert err == (
            f"dicecam labels {action[0]}: error: no labels/ or obj_*_data/ folder of .txt labels in {source}\n"
        )
        assert not out.exists()


def test_a_killed_runs_staging_folder_of_this_process_id_is_said_too(capsys, photos, tmp_path):
    # In a container every run may get the same process id (PID 1): the folder a killed run
    # left then bears this run's id, and was removed without the word said of any other.
    model = models.make_model(tmp_path / "m.onnx", models.raw_preds([(160, 160, 40, 40, {4: 0.9})]))
    left = tmp_path / f".labelled.{os.getpid()}.partial"
    left.mkdir()
    (left / "half.txt").write_text("a killed run's")
    out = tmp_path / "labelled"

    argv = ["label", str(photos), "--out", str(out), "--model", str(model), "--no-progress"]
    code, _, err = run(capsys, *argv)

    assert code == 0
    assert err == (
        f"dicecam label: removed {left}, the unfinished output of an earlier run (process "
        f"{os.getpid()}) stopped before it was done; none of it had reached --out {out}: this "
        "run writes it all\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["labelled", "m.onnx", "photos"]
