"""vision.faces at its edges: the crop around a die, classifiers of 6 classes or another size,
and a cocked die's value."""

from __future__ import annotations

import numpy as np
import pytest

from vision.faces import FaceClassifier, crop_die

pytest.importorskip("onnx", reason="the onnx package builds the test models")
from dicecam_testing import onnx_models as models  # noqa: E402


def _white_box(box: tuple[int, int, int, int]) -> np.ndarray:
    rgb = np.zeros((200, 200, 3), np.uint8)
    x1, y1, x2, y2 = box
    rgb[y1:y2, x1:x2] = 255
    return rgb


def _white_span(line: np.ndarray) -> int:
    return int((line > 127).sum())


def test_the_crop_grows_the_die_by_15_percent_of_its_longer_side_each_way():
    # a 20 px die in a 26 px crop (20 * 1.3) scaled to 48: the die spans 20 / 26 * 48 = 37 px
    crop = crop_die(_white_box((90, 90, 110, 110)), (90, 90, 110, 110))
    assert crop.shape == (48, 48, 3)
    assert 36 <= _white_span(crop[24, :, 0]) <= 38 and 36 <= _white_span(crop[:, 24, 0]) <= 38


def test_a_tall_die_is_cropped_square_by_its_height():
    # 10 wide, 40 tall: a 52 px square (40 * 1.3); the die spans 37 px down and 9 across
    crop = crop_die(_white_box((95, 80, 105, 120)), (95, 80, 105, 120))
    assert 36 <= _white_span(crop[:, 24, 0]) <= 38
    assert 8 <= _white_span(crop[24, :, 0]) <= 10


def test_a_classifier_without_the_cocked_class_reads_values_and_no_cocked_die(tmp_path):
    six = models.make_classifier(tmp_path / "six.onnx", np.arange(6, dtype=np.float32), np.zeros(6))
    classifier = FaceClassifier(six)
    values, cocked, probs = classifier.classify(np.zeros((60, 60, 3), np.uint8), [(10, 10, 30, 30)])
    assert values.tolist() == [6] and cocked.tolist() == [False] and probs.shape == (1, 6)


def test_the_crop_size_comes_from_the_classifiers_input(tmp_path):
    small = models.make_classifier(
        tmp_path / "small.onnx", np.zeros(7, np.float32), np.zeros(7), size=32
    )
    classifier = FaceClassifier(small)
    assert classifier.size == 32
    _, _, probs = classifier.classify(np.zeros((60, 60, 3), np.uint8), [(10, 10, 30, 30)])
    assert probs.shape == (1, 7)


def test_a_die_the_classifier_holds_cocked_still_gets_its_likeliest_face(tmp_path):
    logits = np.array([0, 0, 1.0, 0, 0, 0, 5.0], np.float32)  # cocked, else a 3
    classifier = FaceClassifier(models.make_classifier(tmp_path / "c.onnx", logits, np.zeros(7)))
    values, cocked, _ = classifier.classify(np.zeros((60, 60, 3), np.uint8), [(10, 10, 30, 30)])
    assert values.tolist() == [3] and cocked.tolist() == [True]
    tied = np.array([0, 0, 5.0, 0, 0, 0, 5.0], np.float32)  # as sure of the 3 as of cocked
    classifier = FaceClassifier(models.make_classifier(tmp_path / "t.onnx", tied, np.zeros(7)))
    values, cocked, _ = classifier.classify(np.zeros((60, 60, 3), np.uint8), [(10, 10, 30, 30)])
    assert values.tolist() == [3] and cocked.tolist() == [False]
