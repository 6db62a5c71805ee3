"""vision.stages: finding and loading the reader's second-stage models beside its detector."""

from __future__ import annotations

from pathlib import Path

import pytest

from vision.config import VisionSettings
from vision.stages import STAGES, ModelError, load_stage, stage_path


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
