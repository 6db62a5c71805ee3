"""vision.dice_stages on hand-built boxes: from a look's boxes to the dice of a reading."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from vision.dice_stages import photo_dice, read_faces
from vision.io import LoadedImage

RGB = np.zeros((50, 100, 3), np.uint8)


class Faces:
    """A face classifier whose class probabilities are set by each box's left edge."""

    def __init__(self, by_x1: dict[int, list[float]]) -> None:
        self.by_x1 = by_x1

    def classify(self, rgb, boxes):
        probs = np.array([self.by_x1[int(b[0])] for b in boxes], np.float64)
        values = probs[:, :6].argmax(axis=1) + 1
        cocked = probs[:, 6] > probs[:, :6].max(axis=1) if probs.shape[1] > 6 else None
        return values, cocked, probs


class Cocked:
    """A cocked-die model that flags the boxes with the given left edges; keeps what it got."""

    def __init__(self, cocked_x1: set[int]) -> None:
        self.cocked_x1, self.classifier = cocked_x1, []

    def flags(self, rgb, boxes, classifier=None):
        self.classifier.append(None if classifier is None else np.asarray(classifier).tolist())
        return np.array([int(b[0]) in self.cocked_x1 for b in boxes])


class Check:
    """A die check whose P(a die) is set by each box's left edge (0.9 when not given)."""

    threshold = 0.5

    def __init__(self, by_x1: dict[int, float]) -> None:
        self.by_x1 = by_x1

    def probability(self, rgb, boxes):
        return np.array([self.by_x1.get(int(b[0]), 0.9) for b in boxes])

    def flags(self, rgb, boxes):
        return self.probability(rgb, boxes) >= self.threshold


@dataclass
class Stages:
    conf: float = 0.25
    verify: Any = None
    faces: Any = None
    cocked: Any = None
    unsure_below: float = 0.0
    fit_conf: float = 0.02
    fit_min_verify: float = 0.3
    sure_faint: Any = None


# x1 0: a 2 at 0.3 that the classifier holds cocked (0.6); x1 20: a 4 at exactly 0.5;
# x1 40: a 5 at 0.4
PROBS = {
    0: [0.1, 0.3, 0, 0, 0, 0, 0.6],
    20: [0, 0, 0, 0.5, 0.25, 0.25, 0],
    40: [0, 0, 0, 0, 0.4, 0.3, 0.3],
}
BOXES = np.array([[0, 0, 10, 10], [20, 0, 30, 10], [40, 0, 50, 10]], float)


def test_a_face_is_read_at_its_own_probability_and_a_cocked_die_is_never_unsure():
    zeros = np.zeros(3, int), np.zeros(3, bool)
    reads = read_faces(RGB, BOXES, *zeros, faces=Faces(PROBS), unsure_below=0.5)
    assert reads.values.tolist() == [2, 4, 5]
    # the value's own probability, not the cocked class's 0.6
    assert reads.face_confidence.tolist() == pytest.approx([0.3, 0.5, 0.4])
    assert reads.cocked.tolist() == [True, False, False]
    # 0.3 is under 0.5 but the die leans (no face to be unsure of); 0.5 is at the bar, not under
    assert reads.unsure.tolist() == [False, False, True]


def test_the_cocked_model_gets_the_classifiers_p_cocked_and_sets_the_flags():
    cocked = Cocked({20})
    zeros = np.zeros(3, int), np.zeros(3, bool)
    reads = read_faces(
        RGB, BOXES, *zeros, faces=Faces(PROBS), cocked_model=cocked, unsure_below=0.5
    )
    assert cocked.classifier == [pytest.approx([0.6, 0.0, 0.3])]
    assert reads.cocked.tolist() == [False, True, False]
    assert reads.unsure.tolist() == [True, False, True]  # now the 2 at 0.3 is a flat die
    # a classifier without the cocked class gives the cocked-die model nothing to average
    six = Faces({k: v[:6] for k, v in PROBS.items()})
    read_faces(RGB, BOXES, *zeros, faces=six, cocked_model=cocked)
    assert cocked.classifier[-1] is None


def test_photo_dice_map_each_axis_by_its_own_scale_left_to_right_clipped_to_the_photo():
    # decoded at a quarter of the width and half the height of a 400x100 photo
    img = LoadedImage(rgb=RGB, width=400, height=100)
    boxes = np.array([[90, 5, 110, 15], [10, 40, 20, 48]], float)  # the right one is higher
    look = boxes, np.array([0.9, 0.25]), np.array([5, 3]), np.zeros(2, bool)
    dice, added, dropped = photo_dice(img, look, Stages(conf=0.25, cocked=Cocked({10})))
    assert (added, dropped) == (0, 0)
    assert [d.box for d in dice] == [(40.0, 80.0, 80.0, 96.0), (360.0, 10.0, 400.0, 30.0)]
    assert [d.value for d in dice] == [3, 5]
    assert [d.confidence for d in dice] == [0.25, 0.9]
    assert [d.faint for d in dice] == [False, False]  # a die at the reader's conf is not faint
    assert [d.cocked for d in dice] == [True, False]  # the stages' cocked-die model says so


def test_photo_dice_fit_a_count_with_the_stages_own_fit_bars():
    img = LoadedImage(rgb=RGB, width=100, height=50)
    # a sure die; a faint box at 0.04 the die check is sure of; one at 0.1 it gives 0.5
    boxes = np.array([[0, 0, 10, 10], [40, 0, 50, 10], [80, 0, 90, 10]], float)
    look = boxes, np.array([0.9, 0.04, 0.1]), np.array([1, 2, 3]), np.zeros(3, bool)
    stages = Stages(verify=Check({40: 0.9, 80: 0.5}), fit_conf=0.05, fit_min_verify=0.6)
    dice, added, _ = photo_dice(img, look, stages, expected=2)
    # 0.04 is under the stages' fit_conf 0.05, and 0.5 under their fit_min_verify 0.6
    assert [d.box[0] for d in dice] == [0.0] and added == 0
    stages.fit_conf = 0.03
    dice, added, _ = photo_dice(img, look, stages, expected=2)
    assert [(d.box[0], d.faint) for d in dice] == [(0.0, False), (40.0, True)] and added == 1
