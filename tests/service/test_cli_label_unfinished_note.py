"""The ``unfinished.txt`` an ``--overwrite`` run keeps in ``--out`` while it writes there: left
by a run stopped part way, not by one refused before it wrote anything (before, a label the
writer refused left the note, and the next run said an earlier run had been stopped)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from service.cli._label_out import UNFINISHED, staged
from vision.labelling import LabelledPhoto, write_coco
from vision.types import Die

from dicecam_testing.cli import run_in_process as run

STOPPED = "holds the output of an earlier run stopped before it was done"


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture
def faceless(tmp_path: Path) -> Path:
    """A COCO export whose one die is cocked without a top face: YOLO refuses it without
    --cocked-class, before any file is written."""
    photo = tmp_path / "p.jpg"
    Image.new("RGB", (200, 100)).save(photo)
    die = Die(0, (10, 10, 40, 40), 0.9, cocked=True)
    return write_coco([LabelledPhoto("p.jpg", 200, 100, [die], photo)], tmp_path / "coco")


@pytest.fixture
def out(capsys, faceless: Path, tmp_path: Path) -> Path:
    """An --out an earlier convert wrote."""
    folder = tmp_path / "yolo"
    argv = ["labels", "convert", str(faceless), "--to", "yolo", "--out", str(folder)]
    assert run(capsys, *argv, "--cocked-class")[0] == 0
    return folder


def test_a_convert_refused_before_writing_leaves_no_note_and_the_next_run_says_nothing(
    capsys, faceless: Path, out: Path
):
    earlier = _files(out)
    argv = ["labels", "convert", str(faceless), "--to", "yolo", "--out", str(out), "--overwrite"]
    code, stdout, err = run(capsys, *argv)
    assert (code, stdout) == (2, "")
    assert "--cocked-class" in err and STOPPED not in err
    assert _files(out) == earlier  # no unfinished.txt among them
    code, _, err = run(capsys, *argv, "--cocked-class")
    assert (code, err) == (0, "")
    assert not (out / UNFINISHED).exists()


def test_the_note_of_a_killed_run_stays_through_a_run_refused_before_writing(
    capsys, faceless: Path, out: Path
):
    (out / UNFINISHED).write_text("dicecam labels convert was writing this folder (process 7)")
    earlier = _files(out)
    argv = ["labels", "convert", str(faceless), "--to", "yolo", "--out", str(out), "--overwrite"]
    code, _, err = run(capsys, *argv)
    assert code == 2 and STOPPED in err  # said, as the folder still holds two runs' files
    assert _files(out) == earlier
    code, _, err = run(capsys, *argv, "--cocked-class")
    assert code == 0 and STOPPED in err
    assert not (out / UNFINISHED).exists()


def test_a_run_stopped_after_its_first_write_keeps_the_note(tmp_path: Path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.txt").write_text("earlier")
    with pytest.raises(OSError, match="disk full"), staged(out, "dicecam label") as folder:
        (folder / "a.txt").write_text("this run's")
        raise OSError("disk full")
    assert (out / UNFINISHED).read_text().startswith("dicecam label was writing this folder")


def test_a_run_that_only_removed_a_file_keeps_the_note(tmp_path: Path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "review.csv").write_text("earlier")
    (out / "a.txt").write_text("earlier")
    with pytest.raises(ValueError, match="refused"), staged(out, "dicecam label") as folder:
        (folder / "review.csv").unlink()
        raise ValueError("refused")
    assert (out / UNFINISHED).is_file()
