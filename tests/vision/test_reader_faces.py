"""DiceReader with a second-stage face classifier beside the detector (``NAME-faces.onnx``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vision import DiceReader, ModelError

pytest.importorskip("onnx", reason="the onnx package builds the test models")
from dicecam_testing import onnx_models as models  # noqa: E402

# detector: two 5s; in a 640x480 photo they land at (160, 80)-(240, 160) and (400, 280)-(480, 360)
DICE = [(100, 100, 40, 40, {4: 0.9}), (220, 200, 40, 40, {4: 0.8})]


@pytest.fixture
def detector(tmp_path) -> Path:
    return models.make_model(tmp_path / "reader.onnx", models.raw_preds(DICE))


def _classifier(path: Path) -> Path:
    # dark crops read 6, bright crops read 2; a mid-gray crop reads cocked
    base = np.array([0, 0, 0, 0, 0, 1.0, 0], np.float32)
    mask = np.array([0, 5.0, 0, 0, 0, 0, 0], np.float32)
    return models.make_classifier(path, base, mask)


def _photo() -> np.ndarray:
    bgr = np.zeros((480, 640, 3), np.uint8)
    bgr[70:170, 150:250] = 255  # the first die's area is bright
    return bgr


def test_classifier_beside_the_detector_reads_the_values(detector):
    _classifier(detector.with_name("reader-faces.onnx"))
    reader = DiceReader(detector)
    assert reader.faces is not None and reader.decode_side == 3 * 320
    dice = reader.read(_photo()).dice
    assert [d.value for d in dice] == [2, 6]
    np.testing.assert_allclose(dice[0].box, (160, 80, 240, 160), atol=1e-3)
    assert [d.confidence for d in dice] == pytest.approx([0.9, 0.8])  # presence: the detector's


def test_faces_false_or_absent_uses_the_detector_values(detector, tmp_path):
    assert DiceReader(detector).faces is None
    _classifier(detector.with_name("reader-faces.onnx"))
    assert [d.value for d in DiceReader(detector, faces=False).read(_photo()).dice] == [5, 5]


def test_explicit_classifier_path_and_env(detector, tmp_path, monkeypatch):
    other = _classifier(tmp_path / "elsewhere.onnx")
    assert [d.value for d in DiceReader(detector, faces=other).read(_photo()).dice] == [2, 6]
    monkeypatch.setenv("DICECAM_FACES_MODEL", str(other))
    assert DiceReader(detector).faces is not None
    with pytest.raises(ModelError, match="face classifier not found"):
        DiceReader(detector, faces=tmp_path / "missing.onnx")
    bad = tmp_path / "bad-faces.onnx"
    bad.write_text("nope")
    with pytest.raises(ModelError, match="cannot load face classifier"):
        DiceReader(detector, faces=bad)


def test_cocked_from_the_classifier(detector, tmp_path):
    base = np.array([0, 0, 0, 1.0, 0, 0, 0], np.float32)  # dark: a 4
    mask = np.array([0, 0, 0, 0, 0, 0, 5.0], np.float32)  # bright: cocked
    models.make_classifier(detector.with_name("reader-faces.onnx"), base, mask)
    dice = DiceReader(detector).read(_photo()).dice
    assert [(d.value, d.cocked) for d in dice] == [(4, True), (4, False)]


def test_large_jpeg_is_decoded_finer_for_the_classifier(detector, tmp_path):
    _classifier(detector.with_name("reader-faces.onnx"))
    big = np.zeros((3000, 4000, 3), np.uint8)
    big[437:1063, 937:1563] = 255  # first die: (1000, 500)-(1500, 1000) at 4000/640 scale
    photo = tmp_path / "big.jpg"
    Image.fromarray(big).save(photo, quality=85)
    reading = DiceReader(detector).read(photo)
    assert (reading.width, reading.height) == (4000, 3000)
    assert [d.value for d in reading.dice] == [2, 6]
    np.testing.assert_allclose(reading.dice[0].box, (1000, 500, 1500, 1000), rtol=2e-3)


def test_one_class_detector_finds_dice_and_the_classifier_reads_them(tmp_path):
    one = [(100, 100, 40, 40, {0: 0.9}), (220, 200, 40, 40, {0: 0.7}), (300, 50, 9, 9, {0: 0.1})]
    det = models.make_model(tmp_path / "die.onnx", models.raw_preds(one, nc=1), names="{0: 'die'}")
    with pytest.raises(ModelError, match=r"one-class detector \('die'\).*die-faces\.onnx"):
        DiceReader(det)
    _classifier(det.with_name("die-faces.onnx"))
    reader = DiceReader(det, mirror=False)  # the fake detector sees its boxes in any image
    assert reader.dice_only
    dice = reader.read(_photo()).dice
    assert [d.value for d in dice] == [2, 6]  # the 0.1 box is under the confidence threshold
    assert [d.confidence for d in dice] == pytest.approx([0.9, 0.7])
    np.testing.assert_allclose(dice[1].box, (400, 280, 480, 360), atol=1e-3)


def test_classifier_averages_the_crop_and_its_mirror(tmp_path):
    from vision.faces import FaceClassifier

    model = _classifier(tmp_path / "c-faces.onnx")
    seen = []

    class Mirrored:  # a crop reads face 1, its mirror face 2; checks the second half is mirrored
        def run(self, blob):
            seen.append(blob.shape[0])
            n = blob.shape[0] // 2
            np.testing.assert_array_equal(blob[n:], blob[:n, :, :, ::-1])
            logits = np.full((blob.shape[0], 7), -20.0, np.float32)
            logits[:n, 0] = logits[n:, 1] = 20.0
            return logits

    fc = FaceClassifier(model, tta=True)
    fc._model = Mirrored()
    rgb = np.random.default_rng(0).integers(0, 255, (120, 120, 3), dtype=np.uint8)
    boxes = np.array([[10, 10, 50, 50], [60, 60, 100, 100]], np.float32)
    values, _, probs = fc.classify(rgb, boxes, sure=None)  # every die mirrored
    assert seen == [4]  # 2 dice and their mirrors in one run
    np.testing.assert_allclose(probs[:, :2], 0.5, atol=1e-4)
    plain = FaceClassifier(model, tta=False)
    assert plain.classify(np.zeros((120, 120, 3), np.uint8), boxes)[2].shape == (2, 7)


def test_values_the_classifier_doubts_are_marked_unsure(detector, monkeypatch):
    _classifier(detector.with_name("reader-faces.onnx"))
    dice = DiceReader(detector).read(_photo()).dice
    # the bright crop reads 2 at up to e^5 / (e^5 + e + 5); the dark one 6 at e / (e + 6)
    e = float(np.e)
    assert 0.9 < dice[0].face_confidence <= e**5 / (e**5 + e + 5) + 1e-6
    assert dice[1].face_confidence == pytest.approx(e / (e + 6), abs=1e-3)
    assert [d.unsure for d in dice] == [False, True]  # under the default bar, 0.6
    reading = DiceReader(detector).read(_photo())
    assert reading.unsure == 1 and reading.needs_check
    assert reading.to_dict()["dice"][1]["unsure"] is True
    monkeypatch.setenv("DICECAM_UNSURE_BELOW", "0")
    reading = DiceReader(detector).read(_photo())
    assert not any(d.unsure for d in reading.dice) and not reading.needs_check
    monkeypatch.setenv("DICECAM_UNSURE_BELOW", "0.99")
    assert [d.unsure for d in DiceReader(detector).read(_photo()).dice] == [True, True]
    no_faces = DiceReader(detector, faces=False).read(_photo()).dice  # the detector reads values
    assert [(d.face_confidence, d.unsure) for d in no_faces] == [(None, False), (None, False)]
