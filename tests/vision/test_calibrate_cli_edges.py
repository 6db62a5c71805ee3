"""``dicecam calibrate`` past the plain cases: --clear with other options, what --clear says,
``X;Y`` points, no outline model to propose with, and a preview path it cannot write."""

from __future__ import annotations

import pytest
from PIL import Image

from service.cli import UsageError, main
from service.cli.calibrate import parse_points

pytestmark = pytest.mark.usefixtures("table_settings")
CORNERS = ["10,10", "600,20", "620,460", "20,450"]


@pytest.fixture
def photo(tmp_path):
    path = tmp_path / "cam.png"
    Image.new("RGB", (640, 480), (40, 120, 40)).save(path)
    return path


def test_clear_with_accept_is_refused_and_keeps_the_calibration(photo, tmp_path, capsys):
    out = tmp_path / "cal.json"
    assert main(["calibrate", str(photo), "--points", *CORNERS, "--out", str(out)]) == 0
    stored = out.read_bytes()
    assert main(["calibrate", "--clear", "--accept", "--out", str(out)]) == 2
    assert "expected --clear alone, got it with a photo or points" in capsys.readouterr().err
    assert out.read_bytes() == stored


def test_clear_says_whether_a_calibration_was_removed(photo, tmp_path, capsys):
    out = tmp_path / "cal.json"
    assert main(["calibrate", "--clear", "--out", str(out)]) == 0
    assert capsys.readouterr().out == "no calibration was stored\n"
    assert main(["calibrate", str(photo), "--points", *CORNERS, "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["calibrate", "--clear", "--out", str(out)]) == 0
    assert capsys.readouterr().out == "calibration removed\n"
    assert not out.exists()


def test_normalised_without_points_is_refused_and_proposes_nothing(photo, tmp_path, capsys):
    """It was dropped without a word: a proposal came as if it had not been given."""
    show = tmp_path / "p.png"
    assert main(["calibrate", str(photo), "--normalised", "--show", str(show)]) == 2
    err = capsys.readouterr().err
    assert "expected --points with --normalised (it says they are fractions)" in err
    assert not show.exists()


def test_points_take_a_semicolon_and_exactly_two_numbers():
    assert parse_points(["40;30", "600,25.5"]) == [(40.0, 30.0), (600.0, 25.5)]
    with pytest.raises(UsageError, match=r"expected --points as X,Y pairs .*got '1,2,3'"):
        parse_points(["1,2,3"])


def test_no_outline_model_says_to_give_points(photo, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DICECAM_SURFACE_MODEL", "none")
    show = tmp_path / "p.png"
    assert main(["calibrate", str(photo), "--show", str(show)]) == 2
    err = capsys.readouterr().err
    assert "no learned outline to propose: DICECAM_SURFACE_MODEL is none" in err
    assert not show.exists()


def test_a_preview_path_that_is_not_an_image_is_refused(photo, tmp_path, capsys):
    show, out = tmp_path / "p.txt", tmp_path / "cal.json"
    args = ["calibrate", str(photo), "--points", *CORNERS, "--show", str(show), "--out", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"cannot write the preview {show} (expected a .png or .jpg path)" in err
    assert not show.exists() and not out.exists()
