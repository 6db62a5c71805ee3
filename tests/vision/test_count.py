"""Fitting a reading to the dice count the caller gives: the likeliest dice are kept, faint boxes
the die check holds to be dice are added, and the reading says how many of each."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vision import DiceReader
from vision.annotate import COLOURS, annotate
from vision.count import FIT_POOL, fit_boxes, fit_count
from vision.verify import verify_model_for

pytest.importorskip("onnx", reason="the onnx package builds the test models")
from dicecam_testing import onnx_models as models  # noqa: E402

BOXES = np.array([[0, 0, 10, 10], [20, 0, 30, 10], [40, 0, 50, 10], [42, 0, 52, 10]], float)


def test_too_many_boxes_keep_the_likeliest():
    kept = np.array([True, True, True, False])
    keep, added, dropped = fit_count(BOXES, np.array([0.5, 0.9, 0.7, 0.99]), kept, ~kept, 2)
    assert keep.tolist() == [1, 2] and (added, dropped) == (0, 1)
    keep, added, dropped = fit_count(BOXES, np.array([0.5, 0.9, 0.7, 0.99]), kept, ~kept, 0)
    assert keep.tolist() == [] and dropped == 3


def test_too_few_add_the_likeliest_eligible_box_that_is_not_a_die_already_kept():
    kept = np.array([False, False, True, False])
    eligible = np.array([True, False, False, True])
    # box 3 is the likeliest, but it overlaps the kept box 2 (IoU 0.67): the same die
    keep, added, dropped = fit_count(BOXES, np.array([0.4, 0.95, 0.9, 0.8]), kept, eligible, 3)
    assert keep.tolist() == [0, 2] and (added, dropped) == (1, 0)  # box 1 is not eligible
    keep, added, _ = fit_count(BOXES, np.array([0.4, 0.95, 0.9, 0.8]), kept, eligible, 2)
    assert keep.tolist() == [0, 2] and added == 1
    keep, added, dropped = fit_count(BOXES, np.ones(4), kept, eligible, 1)
    assert keep.tolist() == [2] and (added, dropped) == (0, 0)


def test_a_die_half_hidden_behind_a_kept_one_is_added_but_a_double_box_is_not():
    kept_box = [100, 100, 140, 140]
    half_hidden = [120, 100, 160, 140]  # IoU 1/3 with the kept die: another die behind it
    double = [104, 100, 144, 140]  # IoU 0.82: the same die boxed again
    boxes = np.array([kept_box, double, half_hidden], float)
    kept = np.array([True, False, False])
    keep, added, _ = fit_count(boxes, np.array([0.9, 0.5, 0.3]), kept, ~kept, 2)
    assert keep.tolist() == [0, 2] and added == 1
    keep, added, _ = fit_count(boxes, np.array([0.9, 0.5, 0.3]), kept, ~kept, 2, overlap=0.3)
    assert keep.tolist() == [0] and added == 0  # the bar before 2026-11-26: still short


def test_a_faint_box_on_any_kept_die_or_on_a_die_just_added_is_not_another_die():
    boxes = np.array(
        [
            [0, 0, 20, 20],  # kept
            [100, 0, 120, 20],  # kept
            [102, 0, 122, 20],  # faint, IoU 0.82 with the second kept die: that die again
            [200, 0, 220, 20],  # faint: a die
            [201, 0, 221, 20],  # faint, IoU 0.9 with the one before: the die just added again
        ],
        float,
    )
    kept = np.array([True, True, False, False, False])
    scores = np.array([0.9, 0.8, 0.7, 0.6, 0.5])
    keep, added, dropped = fit_count(boxes, scores, kept, ~kept, 5)
    assert keep.tolist() == [0, 1, 3] and (added, dropped) == (1, 0)


class _Check:
    """A die check that gives each box the probability listed for its left edge (else 0.9) and
    remembers the boxes it was asked about."""

    threshold = 0.5

    def __init__(self, by_x1: dict[int, float]) -> None:
        self.by_x1, self.asked = by_x1, []

    def probability(self, rgb, boxes):
        self.asked += [int(b[0]) for b in boxes]
        return np.array([self.by_x1.get(int(b[0]), 0.9) for b in boxes])


def _fit(boxes, conf, expected, check):
    rgb = np.zeros((20, 20, 3), np.uint8)
    return fit_boxes(
        boxes, conf, expected, conf_min=0.25, verify=check, rgb=rgb, fit_conf=0.05, min_verify=0.5
    )


def test_fit_boxes_ranks_by_confidence_times_the_die_checks_probability():
    # box 0 is the more confident, but the die check is barely sure of it: 0.9 * 0.55 < 0.8 * 0.99
    keep, added, dropped = _fit(BOXES[:2], np.array([0.9, 0.8]), 1, _Check({0: 0.55, 20: 0.99}))
    assert keep.tolist() == [1] and (added, dropped) == (0, 1)


def test_fit_boxes_checks_the_most_confident_faint_boxes_first():
    n = FIT_POOL + 1
    boxes = np.array([[30 * k, 0, 30 * k + 20, 20] for k in range(n + 1)], float)
    conf = np.array([0.9] + [0.06] + [0.1] * (n - 1))  # the faintest one comes first
    check = _Check({})
    keep, added, _ = _fit(boxes, conf, 2, check)
    assert 30 not in check.asked and len(check.asked) == 1 + FIT_POOL
    assert keep.tolist() == [0, 2] and added == 1


def test_a_box_at_the_readers_confidence_is_a_die_and_a_faint_one_at_min_verify_is_added():
    boxes = np.array([[0, 0, 20, 20], [40, 0, 60, 20]], float)
    # 0.25 is conf_min itself: a die the reader keeps, not one added to reach the count
    keep, added, dropped = _fit(boxes[:1], np.array([0.25]), 1, _Check({}))
    assert keep.tolist() == [0] and (added, dropped) == (0, 0)
    # a faint box whose die-check probability is min_verify itself (0.5) reaches it
    keep, added, _ = _fit(boxes, np.array([0.9, 0.1]), 2, _Check({40: 0.5}))
    assert keep.tolist() == [0, 1] and added == 1


def test_a_die_at_the_die_checks_threshold_is_kept_and_a_full_count_checks_no_faint_box():
    boxes = np.array([[0, 0, 20, 20], [40, 0, 60, 20]], float)
    # the die check's probability is its threshold (0.5) itself: a die, not a box it refuses
    keep, added, dropped = _fit(boxes[:1], np.array([0.9]), 1, _Check({0: 0.5}))
    assert keep.tolist() == [0] and (added, dropped) == (0, 0)
    # the count is reached by the dice kept: the faint box is not sent to the die check
    check = _Check({})
    keep, added, _ = _fit(boxes, np.array([0.9, 0.1]), 1, check)
    assert keep.tolist() == [0] and added == 0 and check.asked == [0]


def test_a_faint_box_at_fit_conf_itself_may_fill_the_count():
    boxes = np.array([[0, 0, 20, 20], [40, 0, 60, 20]], float)
    keep, added, _ = _fit(boxes, np.array([0.9, 0.05]), 2, _Check({}))  # fit_conf is 0.05
    assert keep.tolist() == [0, 1] and added == 1


def test_bad_arguments_say_what_was_expected():
    flags = np.zeros(4, bool)
    with pytest.raises(ValueError, match="expected a dice count >= 0, got -1"):
        fit_count(BOXES, np.ones(4), flags, flags, -1)
    with pytest.raises(ValueError, match="expected 4 scores and flags"):
        fit_count(BOXES, np.ones(3), flags, flags, 2)
    with pytest.raises(ValueError, match="got 4, 3 and 4"):  # a flag short: kept
        fit_count(BOXES, np.ones(4), flags[:3], flags, 2)
    with pytest.raises(ValueError, match="got 4, 4 and 5"):  # a flag too many: eligible
        fit_count(BOXES, np.ones(4), flags, np.zeros(5, bool), 2)


@pytest.fixture
def photo() -> np.ndarray:
    bgr = np.full((480, 640, 3), 30, np.uint8)  # dark left half: not a die to the die check
    bgr[:, 320:] = 230
    return bgr


@pytest.fixture
def detector(tmp_path) -> Path:
    """A dynamic detector (a 640x480 photo is read at 320x256) that finds a 5 at 0.9 and, faintly,
    a 6 at 0.15 on the dark half, a 1 at 0.6 and, faintly, a 3 at 0.1 on the bright half; its die
    check takes bright crops for dice."""
    preds = models.raw_preds(
        [
            (60, 128, 20, 20, {4: 0.9}),
            (200, 60, 20, 20, {0: 0.6}),
            (260, 180, 20, 20, {2: 0.1}),
            (100, 200, 20, 20, {5: 0.15}),
        ]
    )
    path = models.make_model(tmp_path / "det.onnx", preds, batch="b", dynamic=True)
    models.bright_is_a_die(verify_model_for(path), threshold="0.2", context="1.5")
    return path


def _reader(detector: Path, **kw) -> DiceReader:
    return DiceReader(
        detector, faces=False, table=None, second_look=0, cocked=False, mirror=False, **kw
    )


def test_a_faint_box_the_die_check_takes_for_a_die_fills_the_count(detector, photo):
    reader = _reader(detector)
    plain = reader.read(photo)
    assert [d.value for d in plain.dice] == [1]  # the 5 is dropped by the die check, the 3 faint
    assert (plain.added, plain.dropped) == (0, 0)

    two = reader.read(photo, expected_dice=2)
    assert sorted(d.value for d in two.dice) == [1, 3]
    assert (two.added, two.dropped, two.missing, two.bust) == (1, 0, 0, False)
    faint = next(d for d in two.dice if d.value == 3)
    assert faint.confidence == pytest.approx(0.1) and faint.box[0] > 320
    assert [d.faint for d in two.dice] == [d.value == 3 for d in two.dice]  # the one to check
    assert two.to_dict()["added"] == 1
    assert [d["faint"] for d in two.to_dict()["dice"]] == [d.faint for d in two.dice]
    # `dicecam read --annotate` draws it in the faint colour, the others as usual
    drawn = annotate(photo, two)
    for die in two.dice:
        x1, y1, _, y2 = (round(v) for v in die.box)
        colour = COLOURS["faint"] if die.faint else COLOURS["table"]
        assert tuple(int(c) for c in drawn[(y1 + y2) // 2, x1]) == colour
    assert not any(d.faint for d in plain.dice)

    # the 5 the die check refused is never added back, nor the faint 6 it does not take for a
    # die: one die stays missing, a bust
    three = reader.read(photo, expected_dice=3)
    assert sorted(d.value for d in three.dice) == [1, 3]
    assert (three.added, three.missing, three.bust) == (1, 1, True)
    # the same count as found: the same dice as without a count
    assert [d.box for d in reader.read(photo, expected_dice=1).dice] == [plain.dice[0].box]
    with pytest.raises(ValueError, match="a dice count of 1 or more, got expected_dice=0"):
        reader.read(photo, expected_dice=0)
    # a whole count only (2.5 dropped dice and reported half a die missing); numpy's is taken
    for bad in (2.5, True, "3"):
        with pytest.raises(ValueError, match=r"dice count of 1 or more, got expected_dice="):
            reader.read(photo, expected_dice=bad)
    counted = reader.read(photo, expected_dice=np.int64(3))
    assert type(counted.expected_dice) is int and json.dumps(counted.to_dict())
    with pytest.raises(TypeError, match="read_batch takes a list of images, got one str"):
        reader.read_batch("roll.jpg")  # it read the path one letter at a time
    from vision.io import ImageError

    with pytest.raises(ImageError, match=r"^image 1 of the batch: .*not an image"):
        reader.read_batch([photo, b"not a photo"])  # which of the in-memory inputs


def test_too_many_dice_for_the_count_drop_the_least_likely(detector, photo):
    reader = _reader(detector, verify=False)  # no die check: the 5 and the 1 are both dice
    assert sorted(d.value for d in reader.read(photo).dice) == [1, 5]
    one = reader.read(photo, expected_dice=1)
    assert [d.value for d in one.dice] == [5] and (one.added, one.dropped) == (0, 1)
    assert one.to_dict()["dropped"] == 1
    # without a die check, faint boxes are never added
    three = reader.read(photo, expected_dice=3)
    assert sorted(d.value for d in three.dice) == [1, 5] and three.missing == 1


def test_settings_turn_the_fit_off_or_raise_its_floor(detector, photo, monkeypatch):
    monkeypatch.setenv("DICECAM_FIT_COUNT", "0")
    off = _reader(detector).read(photo, expected_dice=2)
    assert [d.value for d in off.dice] == [1] and (off.added, off.missing) == (0, 1)
    monkeypatch.delenv("DICECAM_FIT_COUNT")
    monkeypatch.setenv("DICECAM_FIT_CONF", "0.2")  # the 3 at 0.1 is below it
    assert _reader(detector).read(photo, expected_dice=2).added == 0
    monkeypatch.setenv("DICECAM_FIT_CONF", "0.05")
    monkeypatch.setenv("DICECAM_FIT_MIN_VERIFY", "0")  # the faint 6 on the dark half counts too
    three = _reader(detector).read(photo, expected_dice=3)
    assert sorted(d.value for d in three.dice) == [1, 3, 6] and three.added == 2
    monkeypatch.setenv("DICECAM_FIT_MIN_VERIFY", "1.5")
    with pytest.raises(ValueError, match="fit_min_verify"):
        _reader(detector)
