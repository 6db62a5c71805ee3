"""``dicecam synth`` end to end: a small dataset, a preview sheet, and one-line usage errors."""

from __future__ import annotations

import cv2

from service.cli import main


def test_synth_writes_a_dataset_and_a_preview(tmp_path, capsys):
    out = tmp_path / "ds"
    sheet = tmp_path / "sheet.png"
    rc = main(
        [
            "synth",
            "--n",
            "3",
            "--out",
            str(out),
            "--seed",
            "7",
            "--size",
            "192",
            "144",
            "--val-fraction",
            "0.34",
            "--preview",
            str(sheet),
            "--quiet",
        ]
    )
    assert rc == 0
    text = capsys.readouterr().out
    assert "wrote 3 images (2 train, 1 val)" in text
    assert len(list((out / "images" / "train").glob("*.jpg"))) == 2
    assert len(list((out / "labels" / "val").glob("*.txt"))) == 1
    assert (out / "data.yaml").is_file()
    img = cv2.imread(str(sheet))
    assert img is not None and img.shape[0] > 100


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
    assert not (tmp_path / "d").exists()
