"""The table step at its edges: settings out of range, probabilities exactly at a threshold, and
how deep inside the outline the off-table die model's crop reaches (its own ``context``)."""

from __future__ import annotations

import numpy as np
import pytest

from vision.table import TableStage
from vision.types import Die, Reading

from dicecam_testing.table import LeftHalfOutline, table_and_floor

pytestmark = pytest.mark.usefixtures("table_settings")


class OffModel:
    """Stands in for the off-table die model: every die has P(off) ``p``, read from a crop
    ``context`` times its size."""

    def __init__(self, p: float, threshold: float = 0.8, context: float = 4.0) -> None:
        self.p, self.threshold, self.context = p, threshold, context

    def probability(self, rgb, boxes):
        return np.full(len(boxes), self.p)


class DieCheck:
    """Stands in for the die check: every box has P(a die) ``p``."""

    def __init__(self, p: float) -> None:
        self.p = p

    def probability(self, rgb, boxes):
        return np.full(len(boxes), self.p)


def test_a_negative_tolerance_or_a_minimum_confidence_over_one_is_refused():
    with pytest.raises(ValueError, match=r"expected tolerances of 0 or more, got -0.1 and 0.75"):
        TableStage(tolerance=-0.1)
    with pytest.raises(ValueError, match=r"expected tolerances of 0 or more, got 0.25 and -0.5"):
        TableStage(learned_tolerance=-0.5)
    with pytest.raises(ValueError, match=r"expected 0 <= min_confidence <= 1, got 1.5"):
        TableStage(min_confidence=1.5)
    assert TableStage(tolerance=0, min_confidence=1.0).min_confidence == 1.0


def _on_table(stage: TableStage, box) -> bool:
    [die] = stage.apply(Reading(640, 480, [Die(3, box, 0.9)]), table_and_floor()).dice
    return die.on_table


NEAR = (260, 200, 300, 240)  # resting 1 die size inside the left half (edge at x=320)
MIDDLE = (200, 200, 240, 240)  # resting 2.5 die sizes inside


def test_a_die_model_probability_exactly_at_its_threshold_calls_the_die_off():
    def stage(p):
        return TableStage(LeftHalfOutline(), dice_model=OffModel(p), min_die_check=0)

    assert not _on_table(stage(0.8), NEAR)
    assert _on_table(stage(0.79), NEAR)


def test_the_die_model_judges_dice_as_deep_inside_as_half_its_own_crop_reaches():
    """A crop 4 die sizes wide shows an edge 2 die sizes away: a die 2.5 sizes inside stays on.
    A model whose crop is 8 die sizes wide (its ``context``) sees 4 sizes away: it rules there."""
    four = TableStage(LeftHalfOutline(), dice_model=OffModel(0.9, context=4.0), min_die_check=0)
    assert not _on_table(four, NEAR) and _on_table(four, MIDDLE)
    eight = TableStage(LeftHalfOutline(), dice_model=OffModel(0.9, context=8.0), min_die_check=0)
    assert not _on_table(eight, MIDDLE)
    assert _on_table(eight, (40, 200, 80, 240))  # 6.5 sizes inside: past even that crop


def test_a_die_check_probability_exactly_at_the_minimum_keeps_the_die_off_the_table():
    off = (400, 200, 440, 240)  # well off the left half, on the brown floor

    def dice(p):
        stage = TableStage(LeftHalfOutline(), die_check=DieCheck(p), min_die_check=0.7)
        return stage.apply(Reading(640, 480, [Die(3, off, 0.9)]), table_and_floor()).dice

    [kept] = dice(0.7)
    assert not kept.on_table  # a die the check is as sure of as asked: a bust, not dropped
    assert dice(0.69) == []


def _photo(right=(150, 150, 150)) -> np.ndarray:
    """640x480: a grey table on the left half, ``right`` beyond x=320."""
    img = np.full((480, 640, 3), 150, np.uint8)
    img[:, 320:] = right
    return img


def test_the_edge_check_uses_the_stages_own_minimum_contrast():
    """A warmer floor 11.8 away in colour shows an edge at the default 10, not at 15."""
    die = (360, 220, 390, 250)  # resting a die and more past x=320
    warmer = _photo(right=(165, 140, 130))

    def bust(stage):
        return stage.apply(Reading(640, 480, [Die(4, die, 0.9)]), warmer).bust

    assert bust(TableStage(LeftHalfOutline()))
    assert not bust(TableStage(LeftHalfOutline(), edge_contrast=15))


def test_a_die_outside_the_outline_kept_on_by_the_edge_check_is_still_judged_by_the_die_model():
    """The photo shows no edge (one grey floor), so the edge check keeps on a die 3 sizes past
    the learned outline; the die model, sure it is off, still calls it off there: outside the
    outline is never too deep for its crop."""
    outside = (420, 200, 460, 240)  # resting 3 die sizes past x=320
    plain = _photo()

    def on(dice_model):
        stage = TableStage(LeftHalfOutline(), dice_model=dice_model, min_die_check=0)
        return stage.apply(Reading(640, 480, [Die(4, outside, 0.9)]), plain).dice[0].on_table

    assert on(None)  # the edge check alone: no edge shows, the die stays on
    assert not on(OffModel(0.9))
    assert on(OffModel(0.5))  # the die model unsure: the edge check's call stands


def test_a_calibration_of_another_shape_without_an_outline_model_says_no_outline():
    from vision.table import Calibration

    square = Calibration.from_pixels([(0, 0), (480, 0), (480, 480), (0, 480)], 480, 480)
    stage = TableStage(calibration=square)  # no outline model
    reading = stage.apply(Reading(640, 480, [Die(3, (500, 200, 540, 240), 0.9)]), None)
    assert reading.outline is None and not reading.bust
    assert "read with no outline instead" in reading.outline_note
    learned = TableStage(LeftHalfOutline(), calibration=square)
    note = learned.apply(Reading(640, 480, []), table_and_floor()).outline_note
    assert "read with the learned outline instead" in note


def test_the_repr_names_the_die_check_minimum_only_when_it_drops_boxes():
    assert "min_die_check=0.7" in repr(TableStage(die_check=DieCheck(0.5)))
    assert "min_die_check" not in repr(TableStage(die_check=DieCheck(0.5), min_die_check=0))
