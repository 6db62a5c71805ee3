"""Leftovers of the CLI: photos and dice typed among the options (``dicecam read a.jpg --json
b.jpg``), ``dicecam label``'s errors naming ``--out`` rather than its hidden staging folder, and
``dicecam train`` on a full disk leaving no mixed set of models in ``--out``."""

from __future__ import annotations

import errno
import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from dicecam_testing.cli import SAMPLES
from dicecam_testing.cli import run_in_process as run
from dicecam_testing.disk import FULL, TINY, full_disk


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


@pytest.mark.parametrize(
    ("argv", "positional"),
    [
        (["read", "--help"], "[PHOTO ...]"),
        (["read", "a.jpg", "-h"], "[PHOTO ...]"),
        (["score", "--help"], "[dice ...]"),
        (["advise", "--json", "-h"], "[dice ...]"),
    ],
)
def test_help_shows_the_positionals_taken_among_the_options(capsys, argv, positional):
    """The usage line of a subcommand that takes photos or dice among its options names them:
    help printed on the options-only pass (which hides the positionals) left them out."""
    code, out, _ = run(capsys, *argv)
    assert code == 0
    usage = " ".join(out.split("\n\n")[0].split())
    assert usage.startswith(f"usage: dicecam {argv[0]} ")
    assert usage.endswith(positional)


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
        f"dicecam labels convert: error: {FULL}: coco/annotations/"
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


needs_train = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("ultralytics", "torch")),
    reason="dicecam train needs the [train] extra",
)

EARLIER = [
    "tiny-cocked.onnx",
    "tiny-faces.onnx",
    "tiny-faces.pt",
    "tiny.md",
    "tiny.onnx",
    "tiny.pt",
]
"""An earlier model ``tiny`` in --out, with a cocked-die model the recipe does not train."""


@pytest.fixture
def training(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> list[str]:
    """``dicecam train`` of the tiny recipe into ``tmp_path/out``, where an earlier model is
    (:data:`EARLIER`, each file holding ``b"earlier " + its name``), its data rendered already;
    the detector and face classifier steps stood in for by files of 1000 bytes written whole, as
    the real ones are, the evaluations measuring nothing. Returns its argv."""
    import vision.train.detector as detector
    import vision.train.pipeline as pipeline
    import vision.train.run as run_
    from vision.atomic import atomic_write
    from vision.train.recipe import REPO

    def ship_detector(weights: Path, onnx: Path, *, imgsz: int) -> Path:
        atomic_write(onnx, b"d" * 1000)
        atomic_write(onnx.with_suffix(".pt"), b"p" * 1000)
        return onnx

    def train_faces(recipe, dirs, onnx: Path, **kwargs) -> Path:
        atomic_write(onnx, b"f" * 1000)
        atomic_write(onnx.with_suffix(".pt"), b"w" * 1000)
        return onnx

    monkeypatch.setattr(detector, "train_detector", lambda *a, **kw: tmp_path / "best.pt")
    monkeypatch.setattr(pipeline, "ship_detector", ship_detector)
    monkeypatch.setattr(pipeline, "train_faces", train_faces)
    monkeypatch.setattr(run_, "evaluate_model", lambda *a, **kw: None)
    recipe = tmp_path / "tiny.yaml"
    recipe.write_text(TINY.format(model=REPO / "datasets" / "recipes" / "yolo11-dice.yaml"))
    out = tmp_path / "out"
    out.mkdir()
    for name in EARLIER:
        (out / name).write_bytes(b"earlier " + name.encode())
    argv = ["train", "--recipe", str(recipe), "--work", str(tmp_path / "work"), "--out", str(out)]
    assert run(capsys, *argv, "--stage", "data")[0] == 0
    return argv


def _room(tmp_path: Path, files: int) -> int:
    """Bytes for the run's data.yaml, written again, and ``files`` stood-in files and a half."""
    return len((tmp_path / "work" / "data.yaml").read_bytes()) + files * 1000 + 500


@needs_train
def test_train_on_a_full_disk_leaves_the_earlier_model_whole(
    capsys, tmp_path, monkeypatch, training
):
    out = tmp_path / "out"
    full_disk(monkeypatch, tmp_path, room=_room(tmp_path, 2))  # the detector's two files fit
    code, _, err = run(capsys, *training)
    assert code == 1
    faces = tmp_path / "work" / "model" / "tiny-faces.onnx"
    assert err.endswith(
        f"dicecam train: error: {FULL}: {faces}; {out} left as it was (no model of this run "
        "there); the same command starts again\n"
    )
    assert sorted(p.name for p in out.iterdir()) == EARLIER
    assert all((out / n).read_bytes() == b"earlier " + n.encode() for n in EARLIER)
    full_disk(monkeypatch, tmp_path, room=10**6)  # a rerun once there is room
    code, said, err = run(capsys, *training)
    assert (code, err) == (0, "")
    assert said.splitlines()[-1].startswith(f"model -> {out / 'tiny.onnx'} (")
    assert sorted(p.name for p in out.iterdir()) == sorted([*EARLIER, "tiny.json"])
    assert (out / "tiny.onnx").read_bytes() == b"d" * 1000
    assert (out / "tiny-faces.pt").read_bytes() == b"w" * 1000
    assert (out / "tiny-cocked.onnx").read_bytes() == b"earlier tiny-cocked.onnx"  # not trained


@needs_train
def test_a_step_run_alone_says_which_files_in_out_are_new(capsys, tmp_path, monkeypatch, training):
    out = tmp_path / "out"
    full_disk(monkeypatch, tmp_path, room=_room(tmp_path, 1))  # the classifier's ONNX fits
    code, _, err = run(capsys, *training, "--stage", "faces")
    assert code == 1
    assert err.endswith(
        f"dicecam train: error: {FULL}: {out / 'tiny-faces.pt'}; new in {out}: tiny-faces.onnx; "
        "earlier there: tiny-cocked.onnx, tiny-faces.pt, tiny.md, tiny.onnx, tiny.pt (the "
        "reader loads them together: run the step again)\n"
    )
    assert (out / "tiny-faces.pt").read_bytes() == b"earlier tiny-faces.pt"
    full_disk(monkeypatch, tmp_path, room=0)
    code, _, err = run(capsys, *training, "--stage", "detector")
    assert code == 1
    assert err.endswith(f"; {out} left as it was (no file of this run there)\n")
