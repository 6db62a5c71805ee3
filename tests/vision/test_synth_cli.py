"""``dicecam synth`` end to end: a small dataset, a preview sheet, and one-line usage errors."""

from __future__ import annotations

import json

import cv2
import pytest

from service.cli import main


def test_synth_writes_a_dataset_and_a_preview(tmp_path, capsys):
    out = tmp_path / "ds"
    sheet = tmp_path / "sheet.png"
    args = [
        "--n",
        "3",
        "--seed",
        "7",
        "--size",
        "192",
        "144",
        "--val-fraction",
        "0.34",
        "--tile",
        "100",
        "--cols",
        "4",
        "--quiet",
    ]
    rc = main(["synth", *args, "--out", str(out), "--preview", str(sheet)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "wrote 3 images (2 train, 1 val)" in text
    assert len(list((out / "images" / "train").glob("*.jpg"))) == 2
    assert len(list((out / "labels" / "val").glob("*.txt"))) == 1
    assert (out / "data.yaml").is_file()
    img = cv2.imread(str(sheet))
    assert img.shape == (4 + 4 * (75 + 4), 4 + 4 * 104, 3)  # 16 tiles of 100x75 px, 4 columns


def test_synth_usage_errors_exit_2_with_one_line(tmp_path, capsys):
    assert main(["synth", "--n", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("dicecam synth: error:") and "--out" in err and "\n" not in err
    afile = tmp_path / "f"
    afile.write_text("x")
    assert main(["synth", "--n", "2", "--out", str(afile)]) == 2
    assert "is a file" in capsys.readouterr().err
    assert afile.read_text() == "x"
    assert main(["synth", "--n", "0", "--out", str(tmp_path / "d")]) == 2
    assert main(["synth", "--out", str(tmp_path / "d"), "--size", "10", "10"]) == 2
    assert main(["synth", "--preview", str(tmp_path / "s.gif")]) == 2
    assert main(["synth", "--out", str(tmp_path / "d"), "--lean-share", "2"]) == 2
    assert main(["synth", "--out", str(tmp_path / "d"), "--pieces-share", "1.5"]) == 2
    assert main(["synth", "--out", str(tmp_path / "d"), "--elevation", "40", "20"]) == 2
    assert "--elevation" in capsys.readouterr().err
    assert main(["synth", "--out", str(tmp_path / "d"), "--wide-styles", "-1"]) == 2
    assert main(["synth", "--out", str(tmp_path / "d"), "--stone-share", "1.5"]) == 2
    assert "--stone-share must be between 0 and 1" in capsys.readouterr().err
    assert main(["synth", "--n", "1", "--out", str(tmp_path / "d"), "--seed", "-1"]) == 2
    assert "--seed must be 0 or more, got -1" in capsys.readouterr().err  # was a traceback
    assert not (tmp_path / "d").exists()


def test_synth_face_kind_flag(tmp_path):
    out = tmp_path / "numerals"
    args = ["synth", "--n", "2", "--size", "96", "96", "--face-kind", "numeral", "--quiet"]
    assert main([*args, "--out", str(out)]) == 0
    metas = list((out / "meta").rglob("*.json"))
    assert len(metas) == 2
    for meta in metas:
        styles = json.loads(meta.read_text())["scene"]["dice_styles"]
        assert {st["kind"] for st in styles} == {"numeral"}


def test_synth_elevation_flag(tmp_path):
    out = tmp_path / "low"
    args = ["synth", "--n", "3", "--size", "96", "96", "--elevation", "15", "20", "--quiet"]
    assert main([*args, "--out", str(out)]) == 0
    metas = [json.loads(m.read_text()) for m in (out / "meta").rglob("*.json")]
    assert len(metas) == 3
    for meta in metas:
        scene = meta["scene"]
        rimmed = scene["surface"]["kind"] in ("tray", "box")
        low, high = (45, 70) if rimmed else (15, 20)
        assert low <= scene["camera"]["elevation_deg"] <= high


def test_synth_preview_draws_the_images_of_the_options(tmp_path):
    """--preview renders the scenes --out would write: the same --start and scene options
    (it ignored them, and drew the default scenes whatever --face-kind or --stone-share said)."""
    from vision.synth import preview_sheet

    base = ["synth", "--n", "1", "--size", "96", "96", "--tile", "96", "--seed", "5", "--quiet"]
    plain, numerals = tmp_path / "plain.png", tmp_path / "numerals.png"
    assert main([*base, "--preview", str(plain)]) == 0
    args = ["--start", "2", "--face-kind", "numeral", "--stone-share", "1"]
    assert main([*base, *args, "--preview", str(numerals)]) == 0
    expected = preview_sheet(
        seed=5, n=1, cols=4, size=(96, 96), tile=96, start=2, face_kind="numeral", stone_share=1.0
    )
    cv2.imwrite(str(tmp_path / "expected.png"), expected)  # through PNG, as the CLI writes it
    drawn = cv2.imread(str(numerals))
    assert (drawn == cv2.imread(str(tmp_path / "expected.png"))).all()
    assert not (drawn == cv2.imread(str(plain))).all()


def _files(folder) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_synth_gives_write_dataset_every_option_it_was_given(tmp_path, capsys):
    """The dataset --out writes is the one write_dataset renders with the same options: none
    dropped on the way (a share left out rendered the default scenes)."""
    from vision.synth import write_dataset

    options = {
        "seed": 3,
        "start": 1,
        "val_fraction": 0.5,
        "face_kind": "emblem",
        "lean_share": 1.0,
        "pieces_share": 1.0,
        "elevation": (30.0, 40.0),
        "wide_styles": 1.0,
        "stone_share": 1.0,
    }
    args = ["synth", "--n", "2", "--size", "96", "64", "--quiet", "--out", str(tmp_path / "cli")]
    args += ["--seed", "3", "--start", "1", "--val-fraction", "0.5", "--face-kind", "emblem"]
    args += ["--lean-share", "1", "--pieces-share", "1", "--elevation", "30", "40"]
    args += ["--wide-styles", "1", "--stone-share", "1"]
    assert main(args) == 0
    assert "wrote 2 images (1 train, 1 val)" in capsys.readouterr().out
    write_dataset(tmp_path / "direct", 2, size=(96, 64), **options)
    written = _files(tmp_path / "cli")
    assert written == _files(tmp_path / "direct")
    image = next(name for name in written if name.endswith(".jpg"))
    assert cv2.imread(str(tmp_path / "cli" / image)).shape == (64, 96, 3)  # W H: 96 wide
    write_dataset(tmp_path / "plain", 2, size=(96, 64), seed=3, start=1, val_fraction=0.5)
    assert written.keys() == _files(tmp_path / "plain").keys()
    assert written != _files(tmp_path / "plain")  # the options do change what is drawn


def test_synth_takes_the_ends_of_each_range(tmp_path, capsys):
    out = tmp_path / "d"
    args = ["synth", "--n", "1", "--quiet", "--size", "64", "64", "--val-fraction", "0"]
    assert main([*args, "--elevation", "90", "90", "--out", str(out)]) == 0, capsys.readouterr()
    assert "wrote 1 images (1 train, 0 val)" in capsys.readouterr().out
    sheet = tmp_path / "s.jpg"
    assert main([*args, "--tile", "64", "--cols", "1", "--preview", str(sheet)]) == 0
    assert cv2.imread(str(sheet)) is not None


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--workers", "0"], "--workers must be at least 1, got 0"),
        (["--val-fraction", "1"], "--val-fraction must be in [0, 1), got 1.0"),
        (["--val-fraction", "-0.1"], "--val-fraction must be in [0, 1), got -0.1"),
        (["--size", "64", "4097"], "--size must be between 64 and 4096 pixels a side, got 64 4097"),
        (["--size", "63", "64"], "--size must be between 64 and 4096 pixels a side, got 63 64"),
        (["--elevation", "4", "10"], "--elevation must be LO HI with 5 <= LO <= HI <= 90"),
        (["--elevation", "10", "91"], "--elevation must be LO HI with 5 <= LO <= HI <= 90"),
        (["--start", "-1"], "--start must be 0 or more, got -1"),
        (["--tile", "63"], "--tile must be between 64 and 2048 pixels, got 63"),
        (["--tile", "2049"], "--tile must be between 64 and 2048 pixels, got 2049"),
        (["--cols", "0"], "--cols must be at least 1, got 0"),
        (["--wide-styles", "1.5"], "--wide-styles must be between 0 and 1, got 1.5"),
        (["--lean-share", "-0.5"], "--lean-share must be between 0 and 1, got -0.5"),
    ],
)
def test_synth_refuses_an_option_out_of_its_range_in_one_line(tmp_path, capsys, argv, said):
    out = tmp_path / "d"
    assert main(["synth", "--n", "1", "--out", str(out), *argv]) == 2
    err = capsys.readouterr().err
    assert said in err and len(err.strip().splitlines()) == 1, err
    assert not out.exists()


def test_synth_refuses_a_preview_in_a_folder_that_is_not_there(tmp_path, capsys):
    sheet = tmp_path / "nowhere" / "s.png"
    assert main(["synth", "--preview", str(sheet)]) == 2
    assert f"--preview folder does not exist: {sheet.parent}" in capsys.readouterr().err
    assert not sheet.parent.exists()
