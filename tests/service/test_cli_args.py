"""What a user plausibly types that argparse alone mishandles: values below 0 that look like
options, an option given twice, an empty path (the current folder), a file named ``-x.jpg``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from dicecam_testing.cli import DICECAM, ROOT, SAMPLES
from dicecam_testing.cli import run_in_process as run


@pytest.fixture
def photo(tmp_path: Path) -> Path:
    """A 640x480 sample photo in a folder of its own."""
    folder = tmp_path / "photos"
    folder.mkdir()
    return Path(shutil.copy(SAMPLES[0], folder / "roll.jpg"))


@pytest.mark.parametrize(
    ("points", "bad"),
    [(["-100,0", "600,25", "630,470"], 1), (["40,30", "-100,0", "630,470"], 2)],
)
def test_a_point_below_zero_is_refused_as_outside_the_photo(capsys, tmp_path, photo, points, bad):
    out = tmp_path / "calibration.json"
    code, _, err = run(capsys, "calibrate", str(photo), "--points", *points, "--out", str(out))
    assert code == 2
    assert err == (
        f"dicecam calibrate: error: point {bad} (-100, 0) lies outside the 640x480 photo "
        "(expected 0 <= x <= 640 and 0 <= y <= 480)\n"
    )
    assert not out.exists()


def test_a_reject_below_zero_is_said_as_a_face(capsys):
    code, _, err = run(
        capsys, "score", "--game", "solitaire-dice", "--rejects", "-1,2", "1", "2", "3", "4", "5"
    )
    assert code == 2
    assert err == "dicecam score: error: a die face must be a number 1 to 6, got '-1'\n"


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            ["read", "roll.jpg", "--conf", "0.3", "--conf", "0.9"],
            "dicecam read: error: argument --conf: expected once, got --conf 0.3 and --conf 0.9",
        ),
        (
            ["calibrate", "roll.jpg", "--points", "1,1", "9,1", "5,9", "--points", "2,2", "8,2"],
            "dicecam calibrate: error: argument --points: expected once, got --points 1,1 9,1 "
            "5,9 and --points 2,2 8,2",
        ),
        (
            ["score", "--game", "greed", "--game", "farkle-five", "1", "5"],
            "dicecam score: error: argument --game: expected once, got --game greed and --game "
            "farkle-five",
        ),
    ],
)
def test_an_option_given_twice_is_refused(capsys, argv, said):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert err.startswith(said + " (see dicecam ")
    assert out == ""


def test_a_repeatable_option_still_repeats(capsys):
    argv = ["score", "--game", "low-high", "--rule", "scoring=pips", "--rule", "target=40"]
    code, out, err = run(capsys, *argv, "--json", "1", "2", "3")
    assert (code, err) == (0, ""), err
    code, _, err = run(capsys, *argv, "--rule", "colour=red", "1", "2", "3")
    assert code == 2 and "colour" in err and "expected once" not in err


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["read", ""], "PHOTO"),
        (["read", "roll.jpg", "--annotate", ""], "--annotate"),
        (["read", "roll.jpg", "--model", ""], "--model"),
        (["eval", ""], "DATASET"),
        (["label", "", "--out", "labelled"], "PHOTOS"),
        (["synth", "--out", "", "--n", "1", "--quiet"], "--out"),
        (["calibrate", "", "--points", "1,1", "9,1", "5,9"], "PHOTO"),
        (["outbox", "list", "--outbox-dir", ""], "--outbox-dir"),
    ],
)
def test_an_empty_path_is_refused_not_taken_for_the_current_folder(
    capsys, monkeypatch, tmp_path, photo, argv, option
):
    monkeypatch.chdir(photo.parent)  # '' would have read, labelled or written here
    before = sorted(photo.parent.rglob("*"))
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert err.startswith(
        f"dicecam {argv[0]}: error: argument {option}: expected a path, got '' "
        "(write . for the current folder)"
    )
    assert out == ""
    assert sorted(photo.parent.rglob("*")) == before
    assert photo.read_bytes() == SAMPLES[0].read_bytes()


@pytest.mark.parametrize("folder", [".", "photos", "photos/"])
def test_annotated_copies_never_replace_the_photos(capsys, monkeypatch, photo, folder):
    monkeypatch.chdir(photo.parent.parent)
    code, out, err = run(capsys, "read", "photos/roll.jpg", "--annotate", folder)
    if folder == ".":  # another folder than the photo's: written beside, the photo untouched
        assert code == 0, err
        assert Path("roll.jpg").is_file()
    else:
        assert code == 2
        assert err == (
            "dicecam read: error: --annotate: expected a folder other than the photos' own, got "
            "photos (the annotated copy of photos/roll.jpg would replace the photo "
            "photos/roll.jpg)\n"
        )
        assert out == ""
    assert photo.read_bytes() == SAMPLES[0].read_bytes()


def test_a_file_named_with_a_dash_is_said_how_to_name(capsys, monkeypatch, photo):
    monkeypatch.chdir(photo.parent)
    shutil.copy(photo, "-x.jpg")
    code, _, err = run(capsys, "read", "-x.jpg")
    assert code == 2
    assert err == (
        "dicecam read: error: unrecognized arguments: -x.jpg (a file whose name starts with "
        "'-': write ./-x.jpg) (see dicecam read --help)\n"
    )
    code, out, err = run(capsys, "read", "./-x.jpg")
    assert (code, err) == (0, "")
    assert out.startswith("./-x.jpg: ")


def test_unrecognized_arguments_are_said_by_their_subcommand(capsys, tmp_path):
    code, _, err = run(capsys, "labels", "import", "x", "--out", str(tmp_path), "--bogus")
    assert code == 2
    assert err == (
        "dicecam labels import: error: unrecognized arguments: --bogus "
        "(see dicecam labels import --help)\n"
    )


def test_a_photo_after_the_points_is_said_to_come_first(capsys, tmp_path, photo):
    out = tmp_path / "calibration.json"
    argv = ["calibrate", "--points", "40,30", "600,25", "630,470", str(photo), "--out", str(out)]
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert err == (
        f"dicecam calibrate: error: expected PHOTO before --points, got it among the points: "
        f"{str(photo)!r} (dicecam calibrate {photo} --points X,Y ...)\n"
    )
    assert not out.exists()


def test_clear_with_json_prints_json(capsys, tmp_path, photo):
    stored = tmp_path / "calibration.json"
    argv = ["calibrate", str(photo), "--points", "40,30", "600,25", "630,470", "--out", str(stored)]
    assert run(capsys, *argv)[0] == 0
    for removed in (True, False):
        code, out, err = run(capsys, "calibrate", "--clear", "--json", "--out", str(stored))
        assert (code, err) == (0, "")
        assert json.loads(out) == {"removed": removed, "calibration": str(stored)}
        assert not stored.exists()


def tracker(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """``dicecam tracker ARGV`` in a subprocess: a mistake that starts the server times out."""
    env = {**os.environ, "DICECAM_DATA_DIR": str(tmp_path)}
    env["DICECAM_TRACKER_ADMIN_PASSWORD"] = "x" * 12
    cmd = [*DICECAM, "tracker", *argv, "--port", "0"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=30, cwd=ROOT, env=env)


def test_an_empty_admin_name_is_refused_not_served(tmp_path):
    # `if args.create_admin:` took '' for no --create-admin: the tracker started serving
    proc = tracker(tmp_path, "--create-admin", "")
    assert proc.returncode == 2
    assert proc.stderr == (
        "dicecam tracker: error: --create-admin: expected the administrator's name, got ''\n"
    )
    assert proc.stdout == ""
    assert not (tmp_path / "tracker.sqlite3").exists()


def test_a_time_zone_without_create_admin_is_refused_not_served(tmp_path):
    proc = tracker(tmp_path, "--timezone", "Europe/Berlin")
    assert proc.returncode == 2
    assert proc.stderr == (
        "dicecam tracker: error: expected --timezone with --create-admin (the administrator's "
        "time zone)\n"
    )
    assert proc.stdout == ""


def test_an_empty_player_is_refused_before_it_is_queued(capsys, tmp_path):
    outbox = tmp_path / "outbox"
    argv = [
        "submit",
        "--player",
        "",
        "--score",
        "50",
        "--url",
        "http://127.0.0.1:9",
        "--token",
        "t",
    ]
    code, out, err = run(capsys, *argv, "--outbox-dir", str(outbox))
    assert code == 2
    assert err == "dicecam submit: error: --player: expected your player name, got ''\n"
    assert not outbox.exists() or not any(outbox.rglob("*.json"))


@pytest.mark.parametrize(
    ("option", "value", "got"),
    [("--every-ms", "0", "0.0"), ("--settle-ms", "-1", "-1.0"), ("--every-ms", "nan", "nan")],
)
def test_read_refuses_a_video_pace_not_above_zero(capsys, tmp_path, option, value, got):
    code, out, err = run(capsys, "read", option, value, str(tmp_path / "clip.mp4"))
    assert (
        code == 2
        and out == ""
        and err == f"dicecam read: error: {option} must be above 0, got {got}\n"
    )
