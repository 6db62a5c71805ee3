"""``dicecam read`` and ``dicecam eval`` on a tiny known-output model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from service.cli import main

pytest.importorskip("onnx", reason="the onnx package builds the test model")
from dicecam_testing import onnx_models as models  # noqa: E402


@pytest.fixture
def model(tmp_path) -> Path:
    # a 5 and a cocked die in a 320x320 input
    preds = models.raw_preds([(160, 160, 40, 40, {4: 0.9}), (60, 60, 30, 30, {6: 0.8, 2: 0.4})])
    return models.make_model(tmp_path / "m.onnx", preds)


@pytest.fixture
def photos(tmp_path) -> dict[str, Path]:
    good = tmp_path / "roll.jpg"
    Image.new("RGB", (640, 480), (40, 120, 40)).save(good)
    bad = tmp_path / "broken.jpg"
    bad.write_bytes(b"definitely not a jpeg")
    return {"good": good, "bad": bad}


def test_read_json_one_line_per_photo_and_errors_continue(model, photos, capsys):
    code = main(["read", "--json", "--model", str(model), str(photos["bad"]), str(photos["good"])])
    assert code == 1
    out, err = capsys.readouterr()
    lines = [json.loads(line) for line in out.splitlines()]
    assert len(lines) == 2
    assert lines[0]["image"] == str(photos["bad"]) and "not an image" in lines[0]["error"]
    ok = lines[1]
    assert ok["image"] == str(photos["good"]) and (ok["width"], ok["height"]) == (640, 480)
    assert [(d["value"], d["cocked"]) for d in ok["dice"]] == [(3, True), (5, False)]
    assert ok["dice"][1]["box"] == [280.0, 200.0, 360.0, 280.0]
    assert ok["values"] == [5] and ok["cocked"] == 1 and ok["latency_ms"] > 0
    assert err.count(str(photos["bad"])) == 1 and "not an image" in err  # named once


def test_read_a_folder_takes_every_photo_format_and_only_photos(model, tmp_path, capsys):
    pillow_heif = pytest.importorskip(
        "pillow_heif", reason="pillow-heif: pip install 'dicecam[heif]'"
    )
    folder = tmp_path / "camera-roll"
    folder.mkdir()
    im = Image.new("RGB", (640, 480), (40, 120, 40))
    im.save(folder / "a.jpg")
    im.save(folder / "b.png")
    pillow_heif.from_pillow(im).save(folder / "IMG_0001.HEIC")
    (folder / "notes.txt").write_text("not a photo")
    (folder / "2026-11-26").mkdir()  # subfolders are read too, as `dicecam label` reads them
    im.save(folder / "2026-11-26" / "c.jpg")
    (folder / "empty").mkdir()
    assert main(["read", "--json", "--model", str(model), str(folder)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [Path(r["image"]).name for r in lines] == ["c.jpg", "IMG_0001.HEIC", "a.jpg", "b.png"]
    assert all(r["values"] == [5] and (r["width"], r["height"]) == (640, 480) for r in lines)
    assert main(["read", "--model", str(model), str(folder / "empty")]) == 1
    assert "no photos in the folder" in capsys.readouterr().err


def test_read_summary_expect_and_annotate(model, photos, tmp_path, capsys):
    out_dir = tmp_path / "annotated"
    code = main(
        [
            "read",
            "--model",
            str(model),
            "--expect",
            "3",
            "--annotate",
            str(out_dir),
            str(photos["good"]),
        ]
    )
    assert code == 0
    out = capsys.readouterr().out.strip()
    assert out.startswith(f"{photos['good']}: 2 dice, values 5, 1 cocked, 1 missing, BUST")
    drawn = np.asarray(Image.open(out_dir / "roll.jpg").convert("RGB")).astype(int)
    assert drawn.shape == (480, 640, 3)
    plain = np.array([40, 120, 40])
    # the box edge of the 5 (x = 280) is drawn, the middle of the photo's empty area is not
    assert np.abs(drawn[240, 280] - plain).max() > 60
    assert np.abs(drawn[400, 500] - plain).max() < 20
    # told one die was rolled, the reader keeps the likelier of its two and says so
    assert main(["read", "--model", str(model), "--expect", "1", str(photos["good"])]) == 0
    assert capsys.readouterr().out.startswith(f"{photos['good']}: 1 die, values 5, 1 more left out")


def test_an_annotated_copy_that_cannot_be_written_is_said_and_the_reading_stands(
    model, photos, tmp_path, capsys
):
    out_dir = tmp_path / "annotated"
    (out_dir / "roll.jpg").mkdir(parents=True)  # where the copy would go: a folder
    args = ["read", "--json", "--model", str(model), "--annotate", str(out_dir)]
    assert main([*args, str(photos["good"])]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)["values"] == [5]  # the reading is printed all the same
    assert f"dicecam read: {photos['good']}: cannot write {out_dir / 'roll.jpg'}: " in captured.err


def test_read_summary_names_faint_dice_to_check():
    from service.cli.read import _summary
    from vision.types import Die, Reading

    dice = [Die(5, (10, 10, 30, 30), 0.9), Die(2, (50, 10, 70, 30), 0.07, faint=True)]
    reading = Reading(640, 480, dice, image="roll.jpg")
    assert _summary(reading) == "roll.jpg: 2 dice, values 5 2, 1 faint: check"
    reading.added, reading.expected_dice = 1, 2  # the faint die filled the count told
    assert _summary(reading) == "roll.jpg: 2 dice, values 5 2, 1 faint added to make 2"


def test_read_usage_errors_exit_2_with_one_line(tmp_path, photos, capsys):
    missing = tmp_path / "none.onnx"
    for argv, message in [
        (
            ["--model", str(missing)],
            f"expected the reader model (an ONNX file), got '{missing}' (no such file)",
        ),
        (["--expect", "0"], "--expect must be a positive number"),
    ]:
        assert main(["read", *argv, str(photos["good"])]) == 2
        err = capsys.readouterr().err
        assert err.startswith("dicecam read: error:") and message in err
        assert len(err.strip().splitlines()) == 1
    proc = subprocess.run(
        [sys.executable, "-m", "service.cli", "read", "--model", str(missing), str(photos["good"])],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and f"got '{missing}' (no such file)" in proc.stderr


@pytest.mark.parametrize(
    ("command", "env", "message"),
    [
        ("read", {"DICECAM_CONF": "abc"}, "DICECAM_CONF: Input should be a valid number"),
        ("read", {"DICECAM_THREADS": "0"}, "DICECAM_THREADS: Input should be greater than or"),
        ("read", {"DICECAM_IOU": "0"}, "DICECAM_IOU: Input should be greater than 0"),
        ("read", {"DICECAM_BACKEND": "gpu"}, "expected a backend among auto, openvino"),
        ("label", {"DICECAM_THREADS": "0"}, "DICECAM_THREADS: Input should be greater than or"),
        ("eval", {"DICECAM_CONF": "2"}, "DICECAM_CONF: Input should be less than or equal to 1"),
        ("eval", {"DICECAM_BACKEND": "gpu"}, "expected a backend among auto, openvino"),
        ("label", {"DICECAM_BACKEND": "gpu"}, "expected a backend among auto, openvino"),
        # model files that are not what the variable promises: errors, not tracebacks or a
        # surface model read as a face classifier (every die "cocked")
        ("read", {"DICECAM_SURFACE_MODEL": "{junk}"}, "table step: cannot load surface model"),
        ("read", {"DICECAM_OFFTABLE_MODEL": "{junk}"}, "table step: cannot load off-table model"),
        # the table step's own settings too (a multi-line pydantic error that named no variable)
        ("read", {"DICECAM_OFFTABLE_THRESHOLD": "abc"}, "DICECAM_OFFTABLE_THRESHOLD: Input should"),
        ("eval", {"DICECAM_SURFACE_TOLERANCE": "-1"}, "DICECAM_SURFACE_TOLERANCE: Input should"),
        ("label", {"DICECAM_TABLE": "maybe"}, "DICECAM_TABLE: Input should be a valid boolean"),
        (
            "read",
            {"DICECAM_FACES_MODEL": "models/dicecam-surface.onnx"},
            "expected a face classifier (input N x 3 x S x S, output N x 7",
        ),
    ],
)
def test_a_bad_dicecam_variable_is_one_line_naming_it(
    command, env, message, photos, tmp_path, capsys, monkeypatch
):
    junk = tmp_path / "junk.onnx"
    junk.write_text("not a model")
    for name, value in env.items():
        path = Path(__file__).resolve().parents[2] / value
        monkeypatch.setenv(
            name, str(junk) if value == "{junk}" else str(path) if path.is_file() else value
        )
    argv = {
        "read": ["read", str(photos["good"])],
        "label": ["label", str(photos["good"].parent), "--out", str(tmp_path / "o")],
        "eval": ["eval", str(_one_photo_dataset(tmp_path, "0 0.5 0.5 0.2 0.2\n"))],
    }[command]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"dicecam {command}: error: ") and message in err, err
    assert len(err.strip().splitlines()) == 1


def _one_photo_dataset(root: Path, labels: str) -> Path:
    """A YOLO folder with one plain 320x320 photo ``a.png`` and its ``labels`` lines."""
    ds = root / "ds"
    (ds / "images").mkdir(parents=True)
    (ds / "labels").mkdir()
    Image.new("RGB", (320, 320), (90, 90, 90)).save(ds / "images" / "a.png")
    (ds / "labels" / "a.txt").write_text(labels)
    return ds


def test_eval_prints_figures_and_json(model, tmp_path, capsys):
    ds = _one_photo_dataset(tmp_path, "4 0.5 0.5 0.125 0.125\n6 0.1875 0.1875 0.1 0.1\n")
    assert main(["eval", str(ds), "--model", str(model)]) == 0
    text = capsys.readouterr().out
    assert "face accuracy     100.00%" in text and "exact photos      100.00%" in text
    assert "cocked recall     100.00%" in text and "median latency" in text
    assert main(["eval", str(ds), "--model", str(model), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["recall"] == 1.0 and data["confusion"][4][4] == 1 and data["imgsz"] == [320, 320]
    assert data["second_look"] is None  # a fixed-size model reads at its one size


def test_eval_expect_count_fits_the_reading_to_the_labelled_dice(model, tmp_path, capsys):
    ds = _one_photo_dataset(tmp_path, "4 0.5 0.5 0.125 0.125\n")  # only the 5 is labelled
    assert main(["eval", str(ds), "--model", str(model), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["precision"] == 0.5  # the cocked die is extra
    assert main(["eval", str(ds), "--model", str(model), "--json", "--expect-count"]) == 0
    data = json.loads(capsys.readouterr().out)  # told one die: the likelier one is kept
    assert data["precision"] == 1.0 and data["exact_accuracy"] == 1.0


def test_eval_expect_rolled_counts_a_die_out_of_the_photo_as_a_caught_bust(
    model, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("DICECAM_TABLE", "0")  # no outline: only the dice count can bust
    ds = _one_photo_dataset(tmp_path, "4 0.5 0.5 0.125 0.125\n")
    (ds / "meta").mkdir()
    rolled = [
        {"state": "table"},  # the labelled 5
        {"state": "table", "labelled": False},  # the unlabelled box the model also finds
        {"state": "off_table", "labelled": False},  # fell out of the photo: the roll busts
    ]
    (ds / "meta" / "a.json").write_text(json.dumps({"dice": rolled}))
    assert main(["eval", str(ds), "--model", str(model), "--json"]) == 0
    table = json.loads(capsys.readouterr().out)["table"]
    assert table["all_bust_rolls"] == 1 and table["all_busts_caught"] == 0  # nothing off in view
    assert main(["eval", str(ds), "--model", str(model), "--json", "--expect-rolled"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["dice_count"]["short"] == 1  # told 3, found 2: one missing, a bust
    assert data["table"]["all_busts_caught"] == 1 and data["table"]["bust_rolls"] == 0
    assert main(["eval", str(ds), "--model", str(model), "--expect-rolled"]) == 0
    assert "any die off     100.00%  (1/1 rolls" in capsys.readouterr().out
    # told both the photo's count and the dice rolled, the second won without a word: refused
    with pytest.raises(SystemExit) as stopped:
        main(["eval", str(ds), "--model", str(model), "--expect-count", "--expect-rolled"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "argument --expect-rolled: not allowed with argument --expect-count" in err, err


def test_eval_all_on_table_reports_false_busts(model, tmp_path, capsys, monkeypatch):
    from vision.table import Calibration

    ds = _one_photo_dataset(tmp_path, "4 0.5 0.5 0.125 0.125\n")
    assert main(["eval", str(ds), "--model", str(model), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["table"] is None  # no sidecar: no table figures
    args = ["eval", str(ds), "--model", str(model), "--all-on-table"]
    monkeypatch.setenv("DICECAM_TABLE", "0")  # no table step: nothing can bust
    assert main(args) == 0
    assert "false busts       0.00%  (0/1 photos with every die on the table)" in (
        capsys.readouterr().out
    )
    # a calibrated boundary over the left 30% of the frame leaves the model's 5 (at the centre)
    # off the table: on a photo whose dice all lie on it, that bust is a false one
    monkeypatch.delenv("DICECAM_TABLE")
    calibration = Calibration([(0, 0), (0.3, 0), (0.3, 1), (0, 1)]).save(tmp_path / "c.json")
    monkeypatch.setenv("DICECAM_CALIBRATION", str(calibration))
    assert main([*args, "--json", "--mistakes"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["table"]["clean_images"] == 1 and data["table"]["false_busts"] == 1
    assert data["table"]["false_bust_rate"] == 1.0
    assert [Path(p).name for p in data["false_bust_images"]] == ["a.png"]
    assert main([*args, "--mistakes"]) == 0
    assert "busted falsely:" in capsys.readouterr().out


def test_eval_flags_a_photo_labelled_empty_where_the_reader_is_sure_of_dice(
    model, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("DICECAM_MIRROR", "0")  # a fake model: its boxes show mirrored too
    ds = _one_photo_dataset(tmp_path, "")  # the label file left empty; the model sees 2 dice
    assert main(["eval", str(ds), "--model", str(model), "--mistakes"]) == 0
    out = capsys.readouterr().out
    assert "labels to check   1 photos labelled with no die hold 2 dice" in out
    assert "labelled with no die, but the reader is sure of dice" in out and "a.png (2 dice)" in out
    assert main(["eval", str(ds), "--model", str(model), "--json"]) == 0
    (check,) = json.loads(capsys.readouterr().out)["labels_to_check"]
    assert Path(check["image"]).name == "a.png" and check["sure_dice"] == 2


def test_second_look_flag_is_checked_and_reported(model, tmp_path, capsys):
    ds = _one_photo_dataset(tmp_path, "")
    for cmd in (["eval", str(ds)], ["read", str(ds / "images" / "a.png")]):
        assert main([*cmd, "--model", str(model), "--second-look", "-1"]) == 2
        assert "--second-look must be an input size (0: never), got -1" in capsys.readouterr().err
    shipped = Path(__file__).resolve().parents[2] / "models" / "dicecam-reader.onnx"
    assert main(["eval", str(ds), "--model", str(shipped), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["second_look"] == 768
    assert main(["eval", str(ds), "--model", str(shipped), "--second-look", "0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["second_look"] is None
    assert main(["eval", str(ds), "--model", str(shipped)]) == 0
    assert "second look at 768 when the median die is under 24 px" in capsys.readouterr().out


def test_imgsz_flag_is_checked_and_reported(model, tmp_path, capsys):
    ds = _one_photo_dataset(tmp_path, "")
    for cmd in (["eval", str(ds)], ["read", str(ds / "images" / "a.png")]):
        assert main([*cmd, "--model", str(model), "--imgsz", "16"]) == 2
        assert "--imgsz must be an input size of at least 32, got 16" in capsys.readouterr().err
    shipped = Path(__file__).resolve().parents[2] / "models" / "dicecam-reader.onnx"
    assert main(["eval", str(ds), "--model", str(shipped), "--imgsz", "500"]) == 2
    assert "multiple of the model's stride 32, got 500" in capsys.readouterr().err
    assert main(["eval", str(ds), "--model", str(shipped), "--imgsz", "384", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["imgsz"] == [384, 384] and data["second_look"] == 576
    assert main(["eval", str(ds), "--model", str(shipped), "--imgsz", "384"]) == 0
    out = capsys.readouterr().out
    assert "longer side 384" in out and "second look at 576" in out


def test_eval_bad_dataset_is_a_usage_error(model, tmp_path, capsys):
    assert main(["eval", str(tmp_path / "nowhere"), "--model", str(model)]) == 2
    assert "no such dataset" in capsys.readouterr().err


def test_read_lists_the_values_it_is_unsure_of(model, photos, capsys):
    # a classifier beside the detector that reads every die as a 6, at only e / (e + 6) = 0.31
    models.make_classifier(
        model.with_name("m-faces.onnx"), np.array([0, 0, 0, 0, 0, 1.0, 0]), np.zeros(7)
    )
    assert main(["read", "--model", str(model), str(photos["good"])]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{photos['good']}: 2 dice, values 6 6, unsure of 6? 6?: check")
    assert main(["read", "--json", "--model", str(model), str(photos["good"])]) == 0
    line = json.loads(capsys.readouterr().out)
    assert line["unsure"] == 2 and line["needs_check"] is True
    assert [d["face_confidence"] for d in line["dice"]] == [0.3118, 0.3118]


def test_a_photo_with_corrupt_exif_is_read_without_pillows_warning_on_stderr(tmp_path):
    """Pillow warns of a corrupt EXIF block (a line naming its own source file, then the
    warning's code line) and reads the photo all the same: `dicecam read` said that too."""
    from dicecam_testing.cli import DICECAM, ROOT

    exif = Image.Exif()
    exif[0x0112], exif[0x010F] = 6, "Cam"
    photo = tmp_path / "bad-exif.jpg"
    Image.new("RGB", (64, 48), (200, 10, 10)).save(photo, exif=exif.tobytes())
    data = bytearray(photo.read_bytes())
    at = data.find(b"Exif\x00\x00") + 10  # the first IFD's offset: past the block's end
    data[at : at + 4] = b"\xff\xff\x00\x00"
    photo.write_bytes(bytes(data))
    run = subprocess.run(
        [*DICECAM, "read", "--json", "--backend", "onnxruntime", str(photo)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    reading = json.loads(run.stdout)
    assert (reading["width"], reading["height"], reading["dice"]) == (64, 48, [])  # as stored
    assert run.stderr == ""
