"""The detector's mirror look: an unsure photo is read again mirrored and the two looks fused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from vision import DiceReader
from vision.fusion import mirror_boxes, second_opinion

pytest.importorskip("onnx", reason="the onnx package builds the test models")
from dicecam_testing import onnx_models as models  # noqa: E402

PHOTO = np.zeros((480, 640, 3), np.uint8)  # read at 320x256 by a dynamic 320 px model


def _model(tmp_path: Path, dice: list) -> Path:
    """A detector that finds ``dice`` (cx, cy, w, h, {class: score}) in any input, the mirror
    image too: a die at the input's centre line is where its mirror look puts it."""
    preds = models.raw_preds(dice)
    return models.make_model(tmp_path / "m.onnx", preds, batch="b", dynamic=True)


def _reader(model: Path, **kw) -> tuple[DiceReader, list[np.ndarray]]:
    reader = DiceReader(model, faces=False, table=None, second_look=0, cocked=False, **kw)
    seen: list[np.ndarray] = []
    run = reader._run
    reader._run = lambda blob, **k: seen.append(blob.copy()) or run(blob, **k)
    return reader, seen


# -- the second opinion -----------------------------------------------------------------------


def test_the_mirror_look_confirms_doubts_or_misses_each_box_never_adds_one():
    first = np.array([[10, 10, 30, 30], [100, 100, 120, 120], [200, 0, 220, 20]], float)
    mirror = np.array([[12, 10, 32, 30], [100, 100, 120, 120], [300, 300, 320, 320]], float)
    boxes, conf = second_opinion(first, np.array([0.6, 0.4, 0.5]), mirror, np.array([0.3, 0.9, 1]))
    # less sure: the mean of the two; surer: its own; not seen: half its own. The mirror's lone
    # box (0.9 at 300, 300) adds nothing.
    assert conf.tolist() == pytest.approx([0.45, 0.4, 0.25])
    # the box moves towards the surer look: x1 = (10 * 0.6 + 12 * 0.3) / 0.9
    np.testing.assert_allclose(boxes[0], [32 / 3, 10, 92 / 3, 30])
    np.testing.assert_allclose(boxes[1:], first[1:])
    assert first[0].tolist() == [10, 10, 30, 30]  # the caller's boxes are left as they were


def test_a_mirror_box_seconds_one_box_only_the_surest_that_overlaps_it():
    first = np.array([[0, 0, 20, 20], [1, 0, 21, 20]], float)  # two boxes on one die (no NMS)
    mirror = np.array([[0, 0, 20, 20]], float)
    _, conf = second_opinion(first, np.array([0.5, 0.9]), mirror, np.array([0.7]))
    assert conf.tolist() == pytest.approx([0.25, 0.8])  # the 0.9 box took it; the 0.5 is alone
    # under the IoU asked for, boxes are different dice
    _, conf = second_opinion(first[:1], [0.5], mirror + [10, 0, 10, 0], [0.7], iou=0.5)
    assert conf.tolist() == pytest.approx([0.25])


def test_boxes_overlapping_exactly_at_the_iou_asked_for_are_one_die():
    first = np.array([[0, 0, 20, 20]], float)
    half = np.array([[0, 0, 20, 11]], float)  # IoU 220 / 400 = 0.55, SAME_DIE_IOU itself
    _, conf = second_opinion(first, [0.5], half, [0.7])
    assert conf.tolist() == pytest.approx([0.5])  # confirmed, not halved


def test_a_mirror_box_just_under_the_default_iou_is_another_die():
    first = np.array([[0, 0, 20, 20]], float)
    half = np.array([[0, 0, 20, 10]], float)  # IoU 200 / 400 = 0.5, under SAME_DIE_IOU (0.55)
    boxes, conf = second_opinion(first, [0.5], half, [0.7])
    assert conf.tolist() == pytest.approx([0.25])  # not seen: half its own, and not moved
    assert boxes.tolist() == first.tolist()


def test_a_box_neither_look_is_sure_of_stays_where_it_is():
    box = np.array([[10, 10, 30, 30]], float)
    boxes, conf = second_opinion(box, [0.0], box + 1, [0.0], iou=0.5)  # no weight to move it
    assert boxes.tolist() == box.tolist() and conf.tolist() == [0.0]


def test_second_opinion_of_empty_looks_and_mismatched_inputs():
    empty = np.zeros((0, 4))
    boxes, conf = second_opinion(empty, np.zeros(0), np.array([[0, 0, 5, 5]]), np.array([0.4]))
    assert boxes.shape == (0, 4) and conf.shape == (0,)
    boxes, conf = second_opinion(np.array([[0, 0, 5, 5]]), [0.4], empty, np.zeros(0))
    assert conf.tolist() == [0.2] and boxes.tolist() == [[0, 0, 5, 5]]
    with pytest.raises(ValueError, match="2 boxes and 1 confidences in the first look"):
        second_opinion(np.zeros((2, 4)), np.zeros(1), empty, np.zeros(0))
    with pytest.raises(ValueError, match="2 and 1 in the other"):
        second_opinion(empty, np.zeros(0), np.zeros((2, 4)), np.zeros(1))


def test_mirror_boxes_back_into_the_photo():
    boxes = np.array([[10.0, 5.0, 30.0, 25.0], [0.0, 0.0, 320.0, 10.0]])
    np.testing.assert_allclose(mirror_boxes(boxes, 320), [[290, 5, 310, 25], [0, 0, 320, 10]])
    np.testing.assert_allclose(mirror_boxes(mirror_boxes(boxes, 320), 320), boxes)


# -- the reader -------------------------------------------------------------------------------


def test_a_doubtful_photo_is_read_again_mirrored_and_keeps_the_dice_both_looks_see(tmp_path):
    # a 5 on the centre line at 0.3 (the mirror look sees it there too) and a 3 at 0.45 off it
    # (the mirror look puts it at x = 320 - 60 = 260, where the first look saw nothing)
    model = _model(tmp_path, [(160, 128, 40, 40, {4: 0.3}), (60, 128, 40, 40, {2: 0.45})])
    one, _ = _reader(model, mirror=False)
    assert sorted(d.value for d in one.read(PHOTO).dice) == [3, 5]
    reader, seen = _reader(model)
    assert reader.mirror  # on by default
    (die,) = reader.read(PHOTO).dice
    assert (die.value, die.confidence) == (5, pytest.approx(0.3))
    np.testing.assert_allclose(die.box, (280, 200, 360, 280), atol=1e-4)  # 8 rows of pad
    assert [b.shape for b in seen] == [(1, 3, 256, 320)] * 2
    np.testing.assert_array_equal(seen[1], seen[0][..., ::-1])  # the second look is mirrored
    # the 3 only one look saw is half as sure (0.225): a lower threshold keeps it, and never
    # the mirror look's own 3 at x = 260
    low, _ = _reader(model, conf=0.2)
    three, five = sorted(low.read(PHOTO).dice, key=lambda d: d.value)
    assert (three.value, three.confidence, three.box[0]) == (3, pytest.approx(0.225), 80)
    assert (five.value, five.confidence) == (5, pytest.approx(0.3))


def test_sure_photos_and_photos_read_with_a_count_get_one_look(tmp_path, monkeypatch):
    # 0.5 and more: kept whatever the mirror look says; 0.2: under the threshold already
    model = _model(tmp_path, [(60, 128, 40, 40, {4: 0.5}), (250, 60, 30, 30, {1: 0.2})])
    reader, seen = _reader(model)
    assert [d.value for d in reader.read(PHOTO).dice] == [5]
    assert len(seen) == 1
    doubtful = _model(tmp_path, [(60, 128, 40, 40, {4: 0.45})])
    reader, seen = _reader(doubtful)
    assert reader.read(PHOTO).dice == []  # the mirror look does not see it: 0.225
    assert len(seen) == 2
    # told the dice count, fitting it judges the doubtful boxes: one look
    seen.clear()
    assert [d.value for d in reader.read(PHOTO, expected_dice=1).dice] == [5]
    assert len(seen) == 1
    monkeypatch.setenv("DICECAM_MIRROR", "0")
    reader, seen = _reader(doubtful)
    assert not reader.mirror
    assert [d.value for d in reader.read(PHOTO).dice] == [5] and len(seen) == 1


def test_a_batch_mirrors_only_its_doubtful_photos(tmp_path):
    model = _model(tmp_path, [(60, 128, 40, 40, {4: 0.45})])
    reader, seen = _reader(model)
    reader.read_batch([PHOTO, PHOTO, PHOTO], batch_size=8)
    assert [b.shape[0] for b in seen] == [3, 3]  # all three doubtful: mirrored in one batch
    seen.clear()
    reader.conf = 0.2  # 0.45 is sure for a 0.2 threshold (twice 0.2 is under it)
    assert [len(r.dice) for r in reader.read_batch([PHOTO, PHOTO], batch_size=8)] == [1, 1]
    assert [b.shape[0] for b in seen] == [2]


def test_read_and_eval_take_mirror_flags(tmp_path, capsys):
    import json

    from PIL import Image

    from service.cli import main

    model = _model(tmp_path, [(60, 128, 40, 40, {4: 0.45})])  # the mirror look misses it
    photo = tmp_path / "roll.png"
    Image.new("RGB", (640, 480), (90, 90, 90)).save(photo)
    base = ["read", "--json", str(photo), "--model", str(model), "--second-look", "0"]
    values = []
    for flag in ([], ["--mirror"], ["--no-mirror"]):
        assert main([*base, *flag]) == 0
        values.append([d["value"] for d in json.loads(capsys.readouterr().out)["dice"]])
    assert values == [[], [], [5]]
    ds = tmp_path / "ds"
    (ds / "images").mkdir(parents=True)
    (ds / "labels").mkdir()
    Image.new("RGB", (640, 480), (90, 90, 90)).save(ds / "images" / "a.png")
    (ds / "labels" / "a.txt").write_text("4 0.1875 0.5 0.125 0.1667\n")
    for flag, mirror, recall in (("--mirror", True, 0.0), ("--no-mirror", False, 1.0)):
        assert main(["eval", str(ds), "--model", str(model), "--json", flag]) == 0
        data = json.loads(capsys.readouterr().out)
        assert (data["mirror"], data["recall"]) == (mirror, recall)
    assert main(["eval", str(ds), "--model", str(model)]) == 0
    assert "doubtful photos read again mirrored" in capsys.readouterr().out
