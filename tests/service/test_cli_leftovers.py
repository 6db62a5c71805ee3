"""Leftovers of the CLI: photos and dice typed among the options (``dicecam read a.jpg --json
b.jpg``), ``dicecam label``'s errors naming ``--out`` rather than its hidden staging folder, and
``dicecam train`` on a full disk leaving no mixed set of models in ``--out``."""

from __future__ import annotations

import errno
import json
import shutil
from pathlib import Path

import pytest

from service.cli import main

from dicecam_testing.cli import SAMPLES
from dicecam_testing.disk import FULL, full_disk


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``dicecam ARGV`` in process: its exit status (argparse's SystemExit too), stdout, stderr."""
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def photos(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Two sample photos in the current folder, the second named ``-b.jpg``."""
    monkeypatch.chdir(tmp_path)
    return [shutil.copy(SAMPLES[0], "a.jpg"), shutil.copy(SAMPLES[1], "-b.jpg")]


@pytest.mark.parametrize(
    "argv",
    [
        ["a.jpg", "--json", "./-b.jpg"],
        ["--json", "a.jpg", "--conf", "0.25", "./-b.jpg"],
        ["a.jpg", "--json", "--", "-b.jpg"],
        ["--json", "--", "a.jpg", "-b.jpg"],
    ],
)
def test_photos_are_taken_among_the_options(capsys, photos, argv):
    code, out, err = run(capsys, "read", *argv)
    assert (code, err) == (0, "")
    read = [json.loads(line)["image"] for line in out.splitlines()]
    assert [Path(image).name for image in read] == ["a.jpg", "-b.jpg"]


def test_photos_among_the_options_go_to_annotate_only_as_its_value(capsys, photos):
    code, out, err = run(capsys, "read", "a.jpg", "--annotate", "out", "./-b.jpg")
    assert (code, err) == (0, ""), err
    assert len(out.splitlines()) == 2
    assert sorted(p.name for p in Path("out").iterdir()) == ["-b.jpg", "a.jpg"]


def test_after_double_dash_an_option_is_a_file_name(capsys, photos):
    code, out, err = run(capsys, "read", "--", "a.jpg", "--json")
    assert code == 1  # --json is a photo that is not there; a.jpg is read, as text
    assert out.startswith("a.jpg: ")
    assert "--json" in err


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("score", ["1", "5", "--json", "2", "3"]),
        ("score", ["--json", "1", "5", "2", "3"]),
        ("advise", ["1", "--json", "5", "--banked", "0", "2", "3"]),
    ],
)
def test_dice_are_taken_among_the_options(capsys, command, argv):
    code, out, err = run(capsys, command, *argv)
    assert (code, err) == (0, ""), err
    assert json.loads(out)  # --json was taken as the option, wherever it stood
    code, same, err = run(capsys, command, "--json", *[a for a in argv if a != "--json"])
    assert (code, out) == (0, same)


def test_rejects_below_zero_and_repeated_options_hold_among_dice(capsys):
    argv = ["score", "--game", "solitaire-dice", "1", "--rejects", "-1,2", "2", "3", "4", "5"]
    code, _, err = run(capsys, *argv)
    assert (code, err) == (
        2,
        "dicecam score: error: a die face must be a number 1 to 6, got '-1'\n",
    )
    code, _, err = run(capsys, "score", "1", "--game", "greed", "5", "--game", "greed", "2")
    assert code == 2
    assert err.startswith(
        "dicecam score: error: argument --game: expected once, got --game greed and --game greed"
    )


def test_an_unknown_option_among_photos_is_said_alone(capsys, photos):
    code, out, err = run(capsys, "read", "a.jpg", "--bogus", "./-b.jpg")
    assert (code, out) == (2, "")
    assert err == "dicecam read: error: unrecognized arguments: --bogus (see dicecam read --help)\n"
    code, _, err = run(capsys, "read", "a.jpg", "-b.jpg")
    assert err == (
        "dicecam read: error: unrecognized arguments: -b.jpg (a file whose name starts with "
        "'-': write ./-b.jpg) (see dicecam read --help)\n"
    )


def test_points_still_end_at_the_next_option(capsys, tmp_path, photos):
    out = tmp_path / "calibration.json"
    argv = ["calibrate", "a.jpg", "--points", "40,30", "600,25", "630,470", "--out", str(out)]
    code, _, err = run(capsys, *argv, "--json")
    assert (code, err) == (0, "")
    points = json.loads(out.read_text())["points"]  # fractions of the 640x480 photo
    assert len(points) == 3 and points[0] == [40 / 640, 30 / 480]


def _labelled(tmp_path: Path, names: list[str]) -> Path:
    """A folder of sample photos named ``names``."""
    folder = tmp_path / "photos"
    folder.mkdir()
    for sample, name in zip(SAMPLES, names, strict=False):
        shutil.copyfile(sample, folder / name)
    return folder


@pytest.mark.parametrize("fmt", ["yolo", "coco"])
def test_label_on_a_full_disk_names_out_and_leaves_nothing(capsys, tmp_path, monkeypatch, fmt):
    photos = _labelled(tmp_path, ["a.jpg"])
    out = tmp_path / "new" / "labelled"  # its parent made by the run, and taken away again
    full_disk(monkeypatch, tmp_path, room=100)
    argv = ["label", str(photos), "--out", str(out), "--format", fmt, "--no-progress"]
    code, _, err = run(capsys, *argv, "--images", "none")
    assert code == 1
    file = {"yolo": "labels/train/a.txt", "coco": "annotations/instances_default.json"}[fmt]
    assert err == (
        f"dicecam label: error: {FULL}: {out}/{file} (--out {out} was not made; nothing was "
        "left behind)\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["photos"]


def test_labels_convert_into_an_empty_out_on_a_full_disk_keeps_it(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    photos = _labelled(tmp_path, ["a.jpg"])
    labelled = tmp_path / "labelled"
    argv = ["label", str(photos), "--out", str(labelled), "--images", "none", "--no-progress"]
    assert run(capsys, *argv)[0] == 0
    out = tmp_path / "coco"
    out.mkdir()
    full_disk(monkeypatch, tmp_path, room=0)
    code, _, err = run(
        capsys,
        "labels",
        "convert",
        "labelled",
        "--images-from",
        "photos",
        "--to",
        "coco",
        "--out",
        "coco",
    )
    assert code == 1
    assert ".partial" not in err and err.startswith(
        f"dicecam labels: error: {FULL}: coco/annotations/"
    )
    assert err.endswith(" (--out coco is as it was; nothing was left behind)\n")
    assert list(out.iterdir()) == [] and not list(tmp_path.glob(".*"))


def test_a_staged_out_that_cannot_be_put_in_place_is_named(capsys, tmp_path, monkeypatch):
    import vision.atomic

    monkeypatch.chdir(tmp_path)
    photos = _labelled(tmp_path, ["a.jpg"])

    def refused(src, dst, real=vision.atomic.replace_file) -> None:  # the folder only
        if not Path(src).is_dir():
            return real(src, dst)
        raise PermissionError(errno.EACCES, "Permission denied", str(src), None, str(dst))

    monkeypatch.setattr(vision.atomic, "replace_file", refused)
    argv = ["label", str(photos), "--out", "labelled", "--images", "none", "--no-progress"]
    code, _, err = run(capsys, *argv)
    assert code == 1
    assert err == (
        "dicecam label: error: Permission denied: labelled (--out labelled was not made; "
        "nothing was left behind)\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["photos"]
