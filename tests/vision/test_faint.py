"""Faint boxes that the die check and the face classifier are both sure of join the dice (marked
faint) when no dice count is given."""

from __future__ import annotations

import numpy as np
import pytest

from vision import DiceReader
from vision.dice_stages import choose_boxes
from vision.faint import SURE_FAINT_POOL, SureFaint, sure_faint
from vision.verify import verify_model_for

# boxes: a kept die, a faint one beside it, a faint box on the kept die, a fainter one, a faint
# one the die check doubts, a faint one read unsure, a faint cocked one
BOXES = np.array(
    [
        [0, 0, 10, 10],
        [20, 0, 30, 10],
        [1, 0, 11, 10],
        [40, 0, 50, 10],
        [60, 0, 70, 10],
        [80, 0, 90, 10],
        [100, 0, 110, 10],
    ],
    float,
)
CONF = np.array([0.9, 0.2, 0.2, 0.04, 0.2, 0.2, 0.2])


class FakeCheck:
    """P(a die) by the box's left edge; remembers what it was asked."""

    def __init__(self, by_x1):
        self.by_x1, self.asked = by_x1, []

    def probability(self, rgb, boxes):
        self.asked += [int(b[0]) for b in boxes]
        return np.array([self.by_x1.get(int(b[0]), 0.9) for b in boxes])


class FakeFaces:
    """Reads a 3 at 0.95, but a 4 at 0.5 at x1=80 and cocked at x1=100; keeps the ``sure`` bar
    each call gave (the bar over which a die is read without its mirror image)."""

    def __init__(self):
        self.sure = []

    def classify(self, rgb, boxes, *, sure=True):
        self.sure.append(sure)
        n = len(boxes)
        values = np.full(n, 3)
        probs = np.zeros((n, 7))
        probs[:, 2] = 0.95
        cocked = np.zeros(n, bool)
        for i, b in enumerate(boxes):
            if int(b[0]) == 80:
                values[i], probs[i] = 4, [0, 0, 0.4, 0.5, 0, 0, 0.1]
            if int(b[0]) == 100:
                cocked[i] = True
        return values, cocked, probs


RGB = np.zeros((20, 120, 3), np.uint8)


def _sure(**kw):
    kept = np.array([True] + [False] * 6)
    check = FakeCheck({60: 0.3})
    picked = sure_faint(
        RGB,
        BOXES,
        CONF,
        kept,
        conf_min=0.25,
        **{"sure": SureFaint(), "verify": check, "faces": FakeFaces(), **kw},
    )
    return picked.tolist(), check.asked


def test_a_faint_box_both_models_are_sure_of_is_picked_and_no_other():
    picked, asked = _sure()
    assert picked == [1]
    faces = FakeFaces()
    _sure(faces=faces)  # the bar of 0.8 is on the mean with the mirror image: every box mirrored
    assert faces.sure == [None]
    assert sorted(asked) == [20, 60, 80, 100]  # not the kept die, its double, nor the 0.04 box
    assert _sure(pool=1)[1] == [20]  # the most confident first (ties: in order)


def test_the_pool_asks_about_the_most_confident_faint_boxes_not_the_first_found():
    # the later boxes are the more confident: a pool of 2 asks about those two, not the first two
    conf = np.array([0.9, 0.06, 0.1, 0.04, 0.2, 0.15, 0.07])
    check = FakeCheck({})
    kept = np.array([True] + [False] * 6)
    sure_faint(
        RGB,
        BOXES,
        conf,
        kept,
        conf_min=0.25,
        sure=SureFaint(),
        verify=check,
        faces=FakeFaces(),
        pool=2,
    )
    assert check.asked == [60, 80]


def _pick(boxes, conf, kept, conf_min=0.25, sure=None, **kw):
    """sure_faint on hand-built boxes: to FakeCheck each is a die (0.9), FakeFaces reads a 3."""
    kw = {"verify": FakeCheck({}), "faces": FakeFaces(), "sure": sure or SureFaint(), **kw}
    rgb = np.zeros((20, 600, 3), np.uint8)
    boxes, kept = np.array(boxes, float), np.array(kept, bool)
    return sure_faint(rgb, boxes, np.array(conf), kept, conf_min=conf_min, **kw)


def test_each_bar_is_reached_at_its_own_value_and_the_readers_confidence_is_not_faint():
    boxes = [[0, 0, 10, 10], [20, 0, 30, 10], [40, 0, 50, 10]]
    # a box at sure.conf itself is asked about; one at conf_min is the reader's, not faint
    assert _pick(boxes, [0.9, 0.2, 0.3], [1, 0, 0], sure=SureFaint(conf=0.2)).tolist() == [1]
    assert _pick(boxes, [0.9, 0.2, 0.1], [1, 0, 0], conf_min=0.2).tolist() == [2]
    # the die check's 0.9 and the face's 0.95 reach bars of 0.9 and 0.95
    sure = SureFaint(min_check=0.9, min_face=0.95)
    assert _pick(boxes, [0.9, 0.2, 0.1], [1, 0, 0], sure=sure).tolist() == [1, 2]


def test_no_die_check_or_no_face_classifier_adds_nothing():
    boxes, conf, kept = [[0, 0, 10, 10], [20, 0, 30, 10]], [0.9, 0.2], [1, 0]
    assert _pick(boxes, conf, kept).tolist() == [1]
    assert _pick(boxes, conf, kept, faces=None).tolist() == []
    assert _pick(boxes, conf, kept, verify=None).tolist() == []


def test_a_faint_box_overlapping_any_kept_die_a_little_is_not_a_die_of_its_own():
    # two kept dice; faint boxes at IoU 0.33 with the first, 0.18 with the second (both over
    # SURE_FAINT_OVERLAP), and one clear of both
    boxes = [
        [0, 0, 10, 10],
        [100, 0, 110, 10],
        [5, 0, 15, 10],
        [107, 0, 117, 10],
        [200, 0, 210, 10],
    ]
    picked = _pick(boxes, [0.9, 0.9, 0.2, 0.2, 0.1], [1, 1, 0, 0, 0])
    assert picked.tolist() == [4]


def test_the_default_pool_asks_about_twelve_faint_boxes_and_picks_come_in_index_order():
    # left edges clear of 80 and 100, where FakeFaces reads unsure or cocked
    boxes = [[0, 0, 10, 10]] + [[20 * k + 1, 0, 20 * k + 11, 10] for k in range(1, 15)]
    conf = [0.9] + [0.1 + 0.01 * k for k in range(1, 15)]  # the later, the more confident
    check = FakeCheck({})
    picked = _pick(boxes, conf, [1] + [0] * 14, verify=check)
    assert len(check.asked) == SURE_FAINT_POOL == 12
    assert picked.tolist() == list(range(3, 15))  # boxes 1 and 2, the faintest, are not asked


def test_choose_boxes_adds_them_without_a_count_only_when_asked():
    class Verify(FakeCheck):
        def flags(self, rgb, boxes):
            return self.probability(rgb, boxes) >= 0.5

    plain, added, dropped = choose_boxes(
        RGB, BOXES, CONF, conf_min=0.25, verify=Verify({}), faces=FakeFaces()
    )
    assert plain[0].tolist() == [[0, 0, 10, 10]] and (added, dropped) == (0, 0)
    (boxes, conf), _, _ = choose_boxes(
        RGB,
        BOXES,
        CONF,
        conf_min=0.25,
        verify=Verify({60: 0.3}),
        faces=FakeFaces(),
        sure=SureFaint(),
    )
    assert boxes[:, 0].tolist() == [0, 20] and conf.tolist() == [0.9, 0.2]
    # a kept box the die check refuses is not kept, and a faint box on it may then join
    (boxes, _), _, _ = choose_boxes(
        RGB,
        BOXES,
        CONF,
        conf_min=0.25,
        verify=Verify({0: 0.1, 60: 0.3}),
        faces=FakeFaces(),
        sure=SureFaint(min_check=0.5),
    )
    assert sorted(boxes[:, 0].tolist()) == [1, 20]


def test_sure_faint_settings_say_what_was_expected():
    with pytest.raises(ValueError, match="expected 0 <= min_face <= 1, got 1.5"):
        SureFaint(min_face=1.5)


# -- in the reader, with the test detector, die check and face classifier ----------------------


@pytest.fixture
def reader_parts(tmp_path):
    """A detector that finds a 1 at 0.6 and, faintly, a 3 at 0.1 on a photo's bright right half,
    and faintly a 6 at 0.15 on its dark left half; its die check takes bright crops for dice, its
    face classifier reads bright crops as 2 (P 0.98), dark ones as 6 (P 0.29)."""
    pytest.importorskip("onnx", reason="the onnx package builds the test models")
    from dicecam_testing import onnx_models as models
    from dicecam_testing.onnx_models import bright_is_a_die

    preds = models.raw_preds(
        [
            (200, 60, 20, 20, {0: 0.6}),
            (260, 180, 20, 20, {2: 0.1}),
            (100, 200, 20, 20, {5: 0.15}),
        ]
    )
    det = models.make_model(tmp_path / "det.onnx", preds, batch="b", dynamic=True)
    bright_is_a_die(verify_model_for(det), threshold="0.2", context="1.5")
    faces = models.make_classifier(
        tmp_path / "faces.onnx",
        np.array([0, 0, 0, 0, 0, 1.0, 0], np.float32),
        np.array([0, 5.0, 0, 0, 0, 0, 0], np.float32),
    )
    photo = np.full((480, 640, 3), 30, np.uint8)
    photo[:, 320:] = 230
    return det, faces, photo


def _read(parts):
    det, faces, photo = parts
    reader = DiceReader(det, faces=faces, table=None, second_look=0, cocked=False, mirror=False)
    return reader, reader.read(photo)


def test_the_reader_adds_a_sure_faint_die_marked_faint(reader_parts, monkeypatch):
    reader, reading = _read(reader_parts)
    assert reader.sure_faint == SureFaint(0.05, 0.6, 0.8)
    assert sorted((d.value, d.faint) for d in reading.dice) == [(2, False), (2, True)]
    faint = next(d for d in reading.dice if d.faint)
    assert faint.confidence == pytest.approx(0.1) and faint.box[0] > 320
    assert reading.needs_check and (reading.added, reading.dropped) == (0, 0)
    # told the count, the count fit judges faint boxes: the same faint die fills a count of 2
    told = reader.read(reader_parts[2], expected_dice=2)
    assert sorted(d.value for d in told.dice) == [2, 2] and told.added == 1

    monkeypatch.setenv("DICECAM_SURE_FAINT", "0")
    reader, off = _read(reader_parts)
    assert reader.sure_faint is None and [d.value for d in off.dice] == [2]
    monkeypatch.delenv("DICECAM_SURE_FAINT")
    monkeypatch.setenv("DICECAM_SURE_FAINT_CONF", "0.12")  # the faint 3 at 0.1 is under it
    assert [d.value for d in _read(reader_parts)[1].dice] == [2]
    monkeypatch.delenv("DICECAM_SURE_FAINT_CONF")
    # the dark faint box: not a die to the die check; allowed through, its face is unsure
    monkeypatch.setenv("DICECAM_SURE_FAINT_CHECK", "0")
    assert sorted(d.value for d in _read(reader_parts)[1].dice) == [2, 2]
    monkeypatch.setenv("DICECAM_SURE_FAINT_FACE", "0.2")
    assert sorted(d.value for d in _read(reader_parts)[1].dice) == [2, 2, 6]
    monkeypatch.setenv("DICECAM_SURE_FAINT_FACE", "2")
    with pytest.raises(ValueError, match="sure_faint_face"):
        _read(reader_parts)
