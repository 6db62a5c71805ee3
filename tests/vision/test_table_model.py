"""The shipped surface outline model on a rendered synthetic roll, and ``dicecam calibrate``
end to end (pixels in, calibration file out, preview written, errors exit 2)."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from service.cli import main
from vision.table import (
    DEFAULT_SURFACE_MODEL,
    Calibration,
    SurfaceModel,
    SurfaceModelError,
    TableStage,
    apply_table,
    outline_mask,
)
from vision.types import Die, Reading

pytestmark = pytest.mark.usefixtures("table_settings")

# seed 7, index 151 at 640x480: a table whose edge crosses the frame, two dice on the floor
SEED, INDEX = 7, 151


@pytest.fixture(scope="module")
def model() -> SurfaceModel:
    if not DEFAULT_SURFACE_MODEL.is_file():
        pytest.skip(f"surface model not built: {DEFAULT_SURFACE_MODEL}")
    return SurfaceModel()


@pytest.fixture(scope="module")
def sample():
    from vision.synth import make_sample

    s = make_sample(SEED, INDEX, 640, 480)
    assert s.meta["outline"], "the chosen scene must show the table's edge"
    return s


@pytest.fixture
def photo(tmp_path, sample):
    path = tmp_path / "cam.jpg"
    path.write_bytes(sample.jpeg)
    return path


def _truth_reading(sample) -> tuple[Reading, list[bool]]:
    dice = [d for d in sample.meta["dice"] if d["labelled"]]
    reading = Reading(640, 480, [Die(d["value"], tuple(d["box"]), 1.0) for d in dice])
    return reading, [d["state"] not in ("off_table", "in_air") for d in dice]


def test_learned_outline_matches_the_true_surface_and_finds_the_floor_dice(model, sample):
    rgb = cv2.imdecode(np.frombuffer(sample.jpeg, np.uint8), cv2.IMREAD_COLOR)[..., ::-1]
    outline = model.outline(np.ascontiguousarray(rgb))
    assert outline and len(outline) >= 3
    true = outline_mask(sample.meta["outline"], 640, 480).astype(bool)
    found = outline_mask(outline, 640, 480).astype(bool)
    assert (true & found).sum() / (true | found).sum() > 0.85
    reading, on = _truth_reading(sample)
    apply_table(reading, outline)
    assert [d.on_table for d in reading.dice] == on
    assert reading.bust and reading.off_table == on.count(False) >= 1


def test_a_table_filling_the_frame_has_no_outline(model):
    from vision.synth import make_sample

    s = make_sample(7, 3, 640, 480)  # a close-up: no edge in view
    assert s.meta["outline"] is None
    assert model.outline(s.image[..., ::-1].copy()) is None


def test_surface_model_errors_name_what_was_expected(tmp_path, model):
    with pytest.raises(SurfaceModelError, match="surface model not found"):
        SurfaceModel(tmp_path / "none.onnx")
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not onnx")
    with pytest.raises(SurfaceModelError, match="cannot load surface model"):
        SurfaceModel(bad)
    with pytest.raises(ValueError, match="expected an H x W x 3 uint8 RGB image"):
        model.outline(np.zeros((48, 64), np.uint8))
    side = int(model.metadata["imgsz"])  # the input the model was trained and exported at
    assert model.imgsz == (side, side) and "dicecam-surface" in repr(model)


def test_stage_uses_calibration_instead_of_the_model(model, sample):
    cal = Calibration([(0, 0), (1, 0), (1, 1), (0, 1)])
    stage = TableStage(model, cal)
    reading, _ = _truth_reading(sample)
    stage.apply(reading, sample.image[..., ::-1].copy())
    assert reading.off_table == 0 and reading.outline == [(0, 0), (640, 0), (640, 480), (0, 480)]


# -- dicecam calibrate ------------------------------------------------------------------------


def test_calibrate_with_points_stores_normalised_boundary_and_preview(tmp_path, photo, capsys):
    show = tmp_path / "check.png"
    rc = main(["calibrate", str(photo), "--points", "64,48", "576,48", "576,432", "64,432",
               "--show", str(show)])  # fmt: skip
    assert rc == 0
    out = capsys.readouterr().out
    stored = tmp_path / "data" / "calibration.json"
    assert f"calibration stored in {stored} (4 points)" in out
    data = json.loads(stored.read_text())
    assert data["points"] == [[0.1, 0.1], [0.9, 0.1], [0.9, 0.9], [0.1, 0.9]]
    assert data["image"] == str(photo)
    preview = cv2.imread(str(show))
    assert preview.shape == (480, 640, 3)
    original = cv2.imread(str(photo))
    assert np.abs(preview.astype(int) - original).sum(axis=2)[48, 64:576].mean() > 40  # line drawn
    assert TableStage.default().outline(None, 640, 480)[2] == (576.0, 432.0)


def test_calibrate_proposes_the_learned_outline_then_accept_stores_it(
    tmp_path, photo, model, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    assert main(["calibrate", str(photo)]) == 0
    out = capsys.readouterr().out
    assert "proposed boundary" in out and "--points" in out and "--accept" in out
    assert (tmp_path / "cam-calibration.png").is_file()
    assert not (tmp_path / "data" / "calibration.json").exists()  # a proposal stores nothing

    assert main(["calibrate", str(photo), "--accept", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["stored"] and len(result["points"]) >= 3 and result["preview"] is None
    cal = Calibration.load()
    assert cal is not None and np.allclose(cal.outline(640, 480), result["points"], atol=0.2)

    assert main(["calibrate", "--clear"]) == 0
    assert "calibration removed" in capsys.readouterr().out
    assert Calibration.load() is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--points", "1,2", "3"], "expected --points as X,Y pairs"),
        (["--points", "0,0", "10,10"], "at least 3 boundary points"),
        (["--points", "0,0", "900,0", "0,900"], "point 2 (900, 0) lies outside the 640x480 photo"),
        (["--points", "0,0", "9,0", "0,9", "--normalised"], "expected normalised coordinates 0..1"),
        (["--points", "0,0", "1,0", "1,1", "--accept"], "expected --points or --accept"),
        # places it cannot write: they were tracebacks
        (["--points", "0,0", "600,0", "0,400", "--out", "{tmp}"], "--out must be the calibration"),
        (
            ["--points", "0,0", "600,0", "0,400", "--out", "{file}/cal.json"],
            "cannot store the calibration: ",
        ),
        (
            ["--points", "0,0", "600,0", "0,400", "--show", "{file}/show.png"],
            "cannot write the preview ",
        ),
    ],
)
def test_calibrate_bad_points_exit_2_and_store_nothing(tmp_path, photo, args, message, capsys):
    (tmp_path / "a-file").write_text("a file, not a folder")
    args = [a.format(tmp=tmp_path, file=tmp_path / "a-file") for a in args]
    assert main(["calibrate", str(photo), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dicecam calibrate: error: ") and message in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "data" / "calibration.json").exists()


def test_calibrate_proposes_with_the_readers_outline_model(tmp_path, photo, monkeypatch, capsys):
    """Without --model, the proposal comes from DICECAM_SURFACE_MODEL, the outline model the
    reader and the page's proposal use (it took the shipped model whatever the setting said)."""
    monkeypatch.chdir(tmp_path)
    elsewhere = tmp_path / "my-surface.onnx"
    monkeypatch.setenv("DICECAM_SURFACE_MODEL", str(elsewhere))
    assert main(["calibrate", str(photo)]) == 2
    assert (
        f"DICECAM_SURFACE_MODEL: expected the outline model (an ONNX file), or none for no "
        f"outline model, got '{elsewhere}' (no such file)" in capsys.readouterr().err
    )
    elsewhere.write_text("not a model")
    assert main(["calibrate", str(photo)]) == 2
    assert f"cannot load surface model {elsewhere}" in capsys.readouterr().err
    if DEFAULT_SURFACE_MODEL.is_file():  # --model still chooses
        assert main(["calibrate", str(photo), "--model", str(DEFAULT_SURFACE_MODEL)]) == 0


def test_calibrate_unreadable_photo_or_missing_photo_exit_2(tmp_path, capsys):
    bad = tmp_path / "notes.jpg"
    bad.write_text("not a photo")
    assert main(["calibrate", str(bad), "--points", "0,0", "10,0", "10,10"]) == 2
    assert str(bad) in capsys.readouterr().err
    assert main(["calibrate"]) == 2
    assert "expected PHOTO" in capsys.readouterr().err


@pytest.mark.parametrize("threads", [1, 2])
def test_the_readers_table_models_run_with_its_threads(model, threads, monkeypatch):
    """The outline and off-table die models get the reader's threads (``DICECAM_THREADS``),
    as its other models do: with one thread each they took twice the time for nothing."""
    from vision import DiceReader

    monkeypatch.setenv("DICECAM_THREADS", str(threads))
    reader = DiceReader()
    table = reader.table
    assert table is not None and table.dice_model is not None
    for small in (table.model._model, table.dice_model._model, reader.verify._model):
        assert small._session.get_session_options().intra_op_num_threads == threads
