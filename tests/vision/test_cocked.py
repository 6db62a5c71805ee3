"""The cocked-die model: loaded beside the detector, it sets each die's ``cocked`` flag."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from vision import DiceReader
from vision.cocked import (
    COCKED_THRESHOLD,
    COCKED_THRESHOLD_ALONE,
    CockedModel,
    cocked_model_for,
)
from vision.reader import ModelError

pytest.importorskip("onnx", reason="the onnx package builds the test models")
from dicecam_testing import onnx_models as models  # noqa: E402

HERE = Path(__file__).parent
REPO = HERE.parents[1]


def _detector(folder: Path) -> Path:
    """A dynamic 7-class detector that finds two flat 5s: one on the photo's dark left half,
    one on its bright right half (a 640x480 photo is read at 320x256)."""
    preds = models.raw_preds([(60, 128, 20, 20, {4: 0.9}), (260, 128, 20, 20, {4: 0.9})])
    return models.make_model(folder / "det.onnx", preds, batch="b", dynamic=True)


@pytest.fixture
def photo() -> np.ndarray:
    bgr = np.full((480, 640, 3), 30, np.uint8)
    bgr[:, 320:] = 230
    return bgr


def test_a_cocked_model_beside_the_detector_flags_the_dice_it_sees_leaning(tmp_path, photo):
    detector = _detector(tmp_path)
    plain = DiceReader(detector, faces=False, table=None, second_look=0)
    assert plain.cocked is None
    assert [d.cocked for d in plain.read(photo).dice] == [False, False]

    models.bright_is_a_die(
        cocked_model_for(detector), context="2.0", threshold_alone="0.6", tta="True"
    )
    reader = DiceReader(detector, faces=False, table=None, second_look=0)
    assert isinstance(reader.cocked, CockedModel)
    cocked = reader.cocked
    assert (cocked.threshold_alone, cocked.context, cocked.tta) == (0.6, 2.0, True)
    assert cocked.threshold == COCKED_THRESHOLD
    left, right = reader.read(photo).dice
    assert left.box[0] < 320 < right.box[0]
    assert (left.cocked, right.cocked) == (False, True)
    assert (left.value, right.value) == (5, 5)
    assert reader.read(photo).cocked == 1

    off = DiceReader(detector, faces=False, table=None, second_look=0, cocked=False)
    assert off.cocked is None and [d.cocked for d in off.read(photo).dice] == [False, False]


def test_with_the_classifier_the_mean_of_both_probabilities_decides(tmp_path):
    model = CockedModel(models.bright_is_a_die(tmp_path / "m.onnx", threshold="0.45"))
    rgb = np.zeros((100, 200, 3), np.uint8)
    rgb[:, 100:] = 255
    boxes = [(10, 40, 30, 60), (150, 40, 170, 60), (160, 40, 180, 60)]
    p = model.probability(rgb, boxes)
    assert p[0] < 0.01 and p[1] > 0.99 and p[2] > 0.99
    # alone: the model's P(cocked) against threshold_alone
    assert model.flags(rgb, boxes).tolist() == [False, True, True]
    # with the classifier, the mean of both against threshold (0.45): the dark die (model 0)
    # at classifier 0.85 is 0.425, flat; at 0.95 it is 0.475, cocked; bright dice the
    # classifier calls flat (0.0) are at 0.5, cocked
    assert model.flags(rgb, boxes, np.array([0.85, 0.0, 0.0])).tolist() == [False, True, True]
    assert model.flags(rgb, boxes, np.array([0.95, 0.0, 0.0])).tolist() == [True, True, True]
    model.threshold = 0.6
    assert model.flags(rgb, boxes, np.array([0.95, 0.1, 0.3])).tolist() == [False, False, True]


def test_threshold_comes_from_the_argument_the_setting_or_the_model(tmp_path, monkeypatch):
    plain = models.bright_is_a_die(tmp_path / "plain.onnx")
    assert CockedModel(plain).threshold == COCKED_THRESHOLD
    assert CockedModel(plain).threshold_alone == COCKED_THRESHOLD_ALONE
    stored = models.bright_is_a_die(
        tmp_path / "stored.onnx", threshold="0.7", threshold_alone="0.8"
    )
    assert (CockedModel(stored).threshold, CockedModel(stored).threshold_alone) == (0.7, 0.8)
    assert CockedModel(stored, threshold=0.9).threshold == 0.9
    detector = _detector(tmp_path)
    shutil.copyfile(stored, cocked_model_for(detector))
    monkeypatch.setenv("DICECAM_COCKED_THRESHOLD", "0.55")
    assert DiceReader(detector, faces=False, table=None).cocked.threshold == 0.55


def test_bad_cocked_models_are_clear_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="cocked-die model not found"):
        CockedModel(tmp_path / "missing.onnx")
    with pytest.raises(ValueError, match=r"expected 2 classes \(flat, cocked\)"):
        CockedModel(models.bright_is_off(tmp_path / "three.onnx", classes=3))
    with pytest.raises(ValueError, match="threshold metadata, got 'high'"):
        CockedModel(models.bright_is_a_die(tmp_path / "bad.onnx", threshold="high"))
    with pytest.raises(ValueError, match="threshold_alone metadata, got ''"):
        CockedModel(models.bright_is_a_die(tmp_path / "empty.onnx", threshold_alone=""))
    with pytest.raises(ValueError, match="expected 0 < threshold < 1, got 1.5"):
        CockedModel(models.bright_is_a_die(tmp_path / "m.onnx"), threshold=1.5)
    detector = _detector(tmp_path)
    with pytest.raises(ModelError, match="cocked-die model not found"):
        DiceReader(detector, faces=False, table=None, cocked=tmp_path / "nope.onnx")
    (tmp_path / "junk.onnx").write_bytes(b"not a model")
    with pytest.raises(ModelError, match="cannot load cocked-die model"):
        DiceReader(detector, faces=False, table=None, cocked=tmp_path / "junk.onnx")


def test_the_shipped_reader_has_its_cocked_model():
    shipped = REPO / "models" / "dicecam-reader.onnx"
    if not cocked_model_for(shipped).is_file():
        pytest.skip("no cocked-die model shipped")
    reader = DiceReader(shipped, table=None)
    assert reader.cocked is not None and reader.cocked.model_path == cocked_model_for(shipped)
    assert reader.cocked.metadata.get("task") == "dicecam-cocked"


def test_a_die_exactly_at_either_threshold_is_cocked(tmp_path):
    model = CockedModel(
        models.bright_is_a_die(tmp_path / "m.onnx", threshold="0.5", threshold_alone="0.5")
    )
    # the crop (twice the die) of a die centred on a black-white edge is half white: P 0.5
    rgb = np.zeros((192, 192, 3), np.uint8)
    rgb[:, 96:] = 255
    box = [(48, 48, 144, 144)]
    assert model.probability(rgb, box).tolist() == [0.5]
    assert model.flags(rgb, box).tolist() == [True]
    # with the classifier: a bright die (P 1.0) that the classifier holds flat (0.0) is at 0.5
    bright = np.full_like(rgb, 255)
    assert model.probability(bright, box).tolist() == [1.0]
    assert model.flags(bright, box, np.array([0.0])).tolist() == [True]
    model.threshold = 0.55
    assert model.flags(bright, box, np.array([0.0])).tolist() == [False]


def test_the_documented_defaults_hold_for_a_model_without_metadata(tmp_path):
    plain = CockedModel(models.bright_is_a_die(tmp_path / "plain.onnx"))
    assert (plain.threshold, plain.threshold_alone, plain.context) == (0.45, 0.65, 2.0)
