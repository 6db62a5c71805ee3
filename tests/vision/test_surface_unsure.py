"""A photo the outline model is unsure of is told apart from one whose surface fills the frame
and from one with no surface: ``SurfaceModel.find`` says which, and ``dicecam calibrate``
says it (it said "the surface fills the frame" for all three)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from service.cli import main
from vision.table import SurfaceModel

pytest.importorskip("onnx", reason="the onnx package builds the test models")
from dicecam_testing.surface_models import grid_model, logit  # noqa: E402

pytestmark = pytest.mark.usefixtures("table_settings")


@pytest.fixture
def unsure_model(tmp_path):
    """p = 0.6 on red cells and 0.4 elsewhere: certainty |2p - 1| = 0.2 in every cell."""
    return grid_model(tmp_path / "unsure.onnx", [[logit(0.6) - logit(0.4), 0, 0]], [logit(0.4)])


def _left_half_red(path=None) -> np.ndarray:
    rgb = np.zeros((240, 320, 3), np.uint8)
    rgb[:, :160, 0] = 255
    if path is not None:
        Image.fromarray(rgb).save(path)
    return rgb


def test_find_says_unsure_none_found_and_fills_the_frame_apart(unsure_model, tmp_path):
    rgb = _left_half_red()
    unsure = SurfaceModel(unsure_model, min_certainty=0.3).find(rgb)
    assert unsure.unsure and unsure.outline == [] and unsure.certainty == pytest.approx(0.2, 1e-3)
    assert "unsure of this photo (certainty 0.20" in unsure.note
    assert SurfaceModel(unsure_model, min_certainty=0.3).outline(rgb) is None  # busts nothing
    sure = SurfaceModel(unsure_model, min_certainty=0.1).find(rgb)  # the same grid, read
    assert not sure.unsure and len(sure.outline) >= 3
    assert sure.note == f"the learned outline ({len(sure.outline)} corners)"
    red = grid_model(tmp_path / "red.onnx", [[80.0, 0.0, 0.0]], [-40.0])
    everywhere = np.zeros_like(rgb)
    everywhere[..., 0] = 255
    fills = SurfaceModel(red).find(everywhere)
    assert fills.outline is None and not fills.unsure and "fills the frame" in fills.note
    none = SurfaceModel(red).find(np.zeros_like(rgb))
    assert none.outline == [] and not none.unsure and none.note.startswith("no playing surface")


def test_calibrate_says_the_model_was_unsure_not_that_the_surface_fills_the_frame(
    unsure_model, tmp_path, monkeypatch, capsys
):
    photo = tmp_path / "half.png"
    _left_half_red(photo)
    out = tmp_path / "cal.json"
    monkeypatch.chdir(tmp_path)  # a proposal's preview goes to the folder it runs in
    monkeypatch.setenv("DICECAM_SURFACE_MIN_CERTAINTY", "0.3")
    args = ["calibrate", str(photo), "--model", str(unsure_model), "--out", str(out)]
    assert main([*args, "--accept"]) == 2
    err = capsys.readouterr().err
    assert "nothing to accept: the learned outline is unsure of this photo" in err
    assert "fills the frame" not in err and not out.exists()
    assert main([*args, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["points"] == [] and "unsure" in shown["note"]
    assert shown["preview"] == "half-calibration.png"
    assert (tmp_path / "half-calibration.png").is_file()
    monkeypatch.setenv("DICECAM_SURFACE_MIN_CERTAINTY", "0.1")  # sure enough: the left half
    assert main([*args, "--accept"]) == 0
    assert "calibration stored" in capsys.readouterr().out and out.is_file()
