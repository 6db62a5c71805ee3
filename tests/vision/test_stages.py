"""vision.stages: finding and loading the reader's second-stage models beside its detector."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vision.config import VisionSettings
from vision.stages import STAGES, ModelError, default_table, load_stage, stage_path
from vision.table import CalibrationError


def test_a_stage_is_found_beside_the_detector_only_when_its_file_is_there(tmp_path: Path):
    detector = tmp_path / "r.onnx"
    settings = VisionSettings()
    for stage in STAGES:
        assert stage_path(stage, None, detector, settings) is None  # none beside: no stage
        assert load_stage(stage, None, detector, settings) is None
    (tmp_path / "r-faces.onnx").write_bytes(b"x")
    assert stage_path("faces", None, detector, settings) == tmp_path / "r-faces.onnx"
    assert stage_path("faces", False, detector, settings) is None  # False: turned off


def test_a_stage_asked_for_must_exist_and_load(tmp_path: Path, monkeypatch):
    detector = tmp_path / "r.onnx"
    with pytest.raises(ModelError, match="die check not found: .*r-verify.onnx"):
        load_stage("verify", True, detector, VisionSettings())
    gone = tmp_path / "gone.onnx"  # there when the settings were read, then gone
    gone.write_bytes(b"x")
    monkeypatch.setenv("DICECAM_COCKED_MODEL", str(gone))
    settings = VisionSettings()
    gone.unlink()
    with pytest.raises(ModelError, match=r"not found: .*gone.onnx \(named by DICECAM_COCKED"):
        load_stage("cocked", None, detector, settings)
    monkeypatch.delenv("DICECAM_COCKED_MODEL")
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a model")
    with pytest.raises(ModelError, match=f"cannot load face classifier {broken}"):
        load_stage("faces", broken, detector, VisionSettings())
    with pytest.raises(
        ValueError, match=r"expected a stage in \['cocked', 'faces', 'verify'\], got 'dice'"
    ):
        load_stage("dice", None, detector, VisionSettings())


def test_a_setting_asked_for_with_true_is_named_when_its_file_is_gone(tmp_path, monkeypatch):
    gone = tmp_path / "gone.onnx"
    gone.write_bytes(b"x")
    monkeypatch.setenv("DICECAM_FACES_MODEL", str(gone))
    settings = VisionSettings()
    gone.unlink()
    with pytest.raises(
        ModelError, match=r"not found: .*gone.onnx \(named by DICECAM_FACES_MODEL\)$"
    ):
        load_stage("faces", True, tmp_path / "r.onnx", settings)
    with pytest.raises(ModelError) as info:  # the caller's own path is not the setting's
        load_stage("faces", tmp_path / "mine.onnx", tmp_path / "r.onnx", settings)
    assert str(info.value) == f"face classifier not found: {tmp_path / 'mine.onnx'}"


def test_each_stage_is_loaded_with_its_own_settings_and_anew_when_they_change(tmp_path):
    pytest.importorskip("onnx", reason="the onnx package builds the test models")
    from dicecam_testing import onnx_models as models

    die = models.bright_is_a_die(tmp_path / "die.onnx")
    faces = models.make_classifier(
        tmp_path / "faces.onnx", np.zeros(7, np.float32), np.zeros(7, np.float32)
    )
    det = tmp_path / "r.onnx"
    assert load_stage("verify", die, det, VisionSettings(verify_threshold=0.3)).threshold == 0.3
    assert load_stage("verify", die, det, VisionSettings(verify_threshold=0.7)).threshold == 0.7
    assert load_stage("cocked", die, det, VisionSettings(cocked_threshold=0.6)).threshold == 0.6
    assert load_stage("faces", faces, det, VisionSettings(faces_tta=False)).tta is False
    assert load_stage("faces", faces, det, VisionSettings()).tta is True


def test_a_broken_calibration_stays_a_calibration_error(tmp_path, monkeypatch):
    broken = tmp_path / "calibration.json"
    broken.write_text("{", encoding="utf-8")
    monkeypatch.setenv("DICECAM_CALIBRATION", str(broken))
    with pytest.raises(CalibrationError, match="cannot read calibration"):
        default_table()
