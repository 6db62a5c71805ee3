"""The reader's looks (vision.passes) at their edges: which boxes are decoded, which judge the
second look, when the mirror look is taken, and how often a photo is read again."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from vision import DiceReader
from vision.verify import verify_model_for

pytest.importorskip("onnx", reason="the onnx package builds the test models")
from dicecam_testing import onnx_models as models  # noqa: E402

BLACK = np.zeros((480, 640, 3), np.uint8)  # read at 320x256 by a dynamic 320 px model
BRIGHT = np.full((480, 640, 3), 230, np.uint8)  # every crop a die to bright_is_a_die


def _detector(tmp_path: Path, dice: list, *, die_check: bool = False) -> Path:
    """A dynamic detector that finds ``dice`` (cx, cy, w, h, {class: score}) in any input; with
    ``die_check``, a die check beside it that takes bright crops for dice."""
    path = models.make_model(tmp_path / "det.onnx", models.raw_preds(dice), batch="b", dynamic=True)
    if die_check:
        models.bright_is_a_die(verify_model_for(path), threshold="0.2", context="1.5")
    return path


def _spy(reader: DiceReader) -> list[tuple[int, ...]]:
    """The input shapes the reader's detector runs on, in order."""
    seen: list[tuple[int, ...]] = []
    run = reader._run
    reader._run = lambda blob, **kw: seen.append(blob.shape) or run(blob, **kw)
    return seen


def test_a_sure_faint_die_under_the_second_looks_bar_is_still_decoded(tmp_path):
    # a 1 at 0.6 and a 3 at 0.07: under DICECAM_SECOND_LOOK_CONF (0.1), over the sure-faint
    # bar (0.05); the die check and the face classifier (a 2 at P 0.98) are sure of both
    det = _detector(
        tmp_path, [(200, 60, 20, 20, {0: 0.6}), (260, 180, 20, 20, {2: 0.07})], die_check=True
    )
    faces = models.make_classifier(
        tmp_path / "faces.onnx",
        np.array([0, 0, 0, 0, 0, 1.0, 0], np.float32),
        np.array([0, 5.0, 0, 0, 0, 0, 0], np.float32),
    )
    reader = DiceReader(det, faces=faces, table=None, second_look=0, cocked=False, mirror=False)
    assert reader.second_look_conf == 0.1 and reader.sure_faint.conf == 0.05
    reading = reader.read(BRIGHT)
    assert sorted((d.value, d.faint) for d in reading.dice) == [(2, False), (2, True)]
    assert next(d for d in reading.dice if d.faint).confidence == pytest.approx(0.07)


def test_boxes_under_the_second_looks_bar_do_not_make_the_dice_small(tmp_path):
    # a large 5 (30 px) and two small boxes (20 px) at 0.05: decoded to fill a count (down to
    # fit_conf 0.02) but under the second look's bar (0.1), so the median die is the large one
    det = _detector(
        tmp_path,
        [(60, 128, 30, 30, {4: 0.9}), (160, 60, 20, 20, {1: 0.05}), (260, 60, 20, 20, {2: 0.05})],
        die_check=True,
    )
    reader = DiceReader(det, faces=False, table=None, second_look=640, cocked=False)
    seen = _spy(reader)
    assert [d.value for d in reader.read(BRIGHT, expected_dice=1).dice] == [5]
    assert seen == [(1, 3, 256, 320)]  # one look


def test_a_photo_of_small_dice_read_short_of_the_count_is_read_again_once(tmp_path):
    # one 5 of 20 px: small, so the second look reads it; told 2 dice, it is short as well
    reader = DiceReader(
        _detector(tmp_path, [(160, 128, 20, 20, {4: 0.9})]),
        faces=False,
        table=None,
        second_look=640,
        mirror=False,
    )
    seen = _spy(reader)
    reading = reader.read(BLACK, expected_dice=2)
    assert [d.value for d in reading.dice] == [5] and reading.missing == 1
    assert seen == [(1, 3, 256, 320), (1, 3, 480, 640)]  # the second look once, one photo


def test_without_the_count_fit_a_photo_read_with_a_count_still_gets_the_mirror_look(
    tmp_path, monkeypatch
):
    # a doubtful 5 at 0.45 off the centre line: the mirror look does not see it (0.225)
    model = _detector(tmp_path, [(60, 128, 40, 40, {4: 0.45})])
    monkeypatch.setenv("DICECAM_FIT_COUNT", "0")
    reader = DiceReader(model, faces=False, table=None, second_look=0, cocked=False)
    assert not reader.fit_count and reader.mirror
    seen = _spy(reader)
    assert reader.read(BLACK, expected_dice=1).dice == []  # halved under the threshold
    assert seen == [(1, 3, 256, 320)] * 2  # the first look and the mirror look


def test_the_mirror_look_confirms_a_box_with_its_own_boxes_from_half_the_faint_bar(tmp_path):
    # a 5 at 0.3 at x = 100 and a 3 at 0.07 at x = 220, where the mirror look puts the 5's mirror
    # image: the mirror look sees the 5 at 0.07 (decoded from 0.1 / 2), so the 5 takes the mean
    # (0.185) instead of half its own (0.15), over the reader's 0.16; the first look's 3 is under
    # its own floor (0.1) and never read
    model = _detector(tmp_path, [(100, 128, 40, 40, {4: 0.3}), (220, 128, 40, 40, {2: 0.07})])
    reader = DiceReader(model, faces=False, table=None, second_look=0, cocked=False, conf=0.16)
    seen = _spy(reader)
    (die,) = reader.read(BLACK).dice
    assert (die.value, die.confidence) == (5, pytest.approx(0.185))
    assert len(seen) == 2  # the first look and the mirror look


def test_a_die_the_mirror_look_halves_under_the_faint_bar_leaves_a_photo_for_the_second_look(
    tmp_path,
):
    # a large 5 (30 px) at 0.15 off the centre line, doubtful to a reader of conf 0.15: over the
    # faint bar (0.1), so not small at first; the mirror look does not see it (0.075): the photo
    # then holds no box and is read again larger, where the mirror look halves it again
    model = _detector(tmp_path, [(60, 128, 30, 30, {4: 0.15})])
    reader = DiceReader(model, faces=False, table=None, second_look=640, cocked=False, conf=0.15)
    assert reader.second_look_conf == 0.1
    seen = _spy(reader)
    assert reader.read(BLACK).dice == []
    assert seen == [(1, 3, 256, 320)] * 2 + [(1, 3, 480, 640)] * 2


def test_a_batchs_latencies_share_out_the_looks_it_took_once(tmp_path):
    # four photos of small dice: one first look and one second look for the four, each made to
    # take 0.1 s; the readings' latencies add up to the time the batch took, not more
    reader = DiceReader(
        _detector(tmp_path, [(160, 128, 20, 20, {4: 0.9})]),
        faces=False,
        table=None,
        second_look=640,
        mirror=False,
    )
    seen = _spy(reader)
    run = reader._run
    reader._run = lambda blob, **kw: time.sleep(0.1) or run(blob, **kw)
    t0 = time.perf_counter()
    readings = reader.read_batch([BLACK] * 4, batch_size=8)
    took_ms = (time.perf_counter() - t0) * 1000
    assert seen == [(4, 3, 256, 320), (4, 3, 480, 640)]
    assert [len(r.dice) for r in readings] == [1] * 4
    assert 200 <= sum(r.latency_ms for r in readings) <= took_ms


def test_a_reader_without_a_second_look_reads_small_dice_at_one_look(tmp_path):
    reader = DiceReader(
        _detector(tmp_path, [(160, 128, 20, 20, {4: 0.9})]),
        faces=False,
        table=None,
        second_look=0,
        mirror=False,
    )
    assert reader.second_look is None
    seen = _spy(reader)
    assert [d.value for d in reader.read(BLACK).dice] == [5]
    assert seen == [(1, 3, 256, 320)]  # small dice, but nothing larger to read them at


def test_dice_are_judged_small_at_the_first_looks_longer_side(tmp_path):
    # a dynamic model exported at 256x320: a 640x480 photo is read at 320 wide, where a die of
    # 27 input pixels is not small (24); at the shorter side's scale (256) it would be 21.6
    preds = models.raw_preds([(160, 128, 27, 27, {4: 0.9})])
    path = models.make_model(
        tmp_path / "wide.onnx", preds, batch="b", dynamic=True, imgsz=(256, 320)
    )
    reader = DiceReader(path, faces=False, table=None, second_look=640, mirror=False)
    assert reader.imgsz == (256, 320)
    seen = _spy(reader)
    assert [d.value for d in reader.read(BLACK).dice] == [5]
    assert seen == [(1, 3, 256, 320)]
