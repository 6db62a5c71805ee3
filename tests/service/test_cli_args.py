"""What a user plausibly types that argparse alone mishandles: values below 0 that look like
options, an option given twice, an empty path (the current folder), a file named ``-x.jpg``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from service.cli import main

from dicecam_testing.cli import SAMPLES


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``dicecam ARGV`` in process: its exit status (argparse's SystemExit too), stdout, stderr."""
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


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
