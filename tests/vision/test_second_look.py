"""The reader's second look: photos whose dice are small are read again at a larger input size."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision import DiceReader

pytest.importorskip("onnx", reason="the onnx package builds the test models")
from dicecam_testing import onnx_models as models  # noqa: E402

SAMPLES = Path(__file__).resolve().parents[2] / "datasets" / "samples"


def _spy(reader: DiceReader) -> list[tuple[int, ...]]:
    seen: list[tuple[int, ...]] = []
    run = reader._run
    reader._run = lambda blob, **kw: seen.append(blob.shape) or run(blob, **kw)
    return seen


def _dynamic(tmp_path: Path, side: float) -> Path:
    # one 5 of `side` input pixels, centred at (160, 128) whatever the input size
    preds = models.raw_preds([(160, 128, side, side, {4: 0.9})])
    return models.make_model(tmp_path / f"dyn{side}.onnx", preds, batch="b", dynamic=True)


@pytest.mark.parametrize("backend", ["onnxruntime", "openvino"])
def test_small_dice_get_a_second_look_at_the_larger_size(tmp_path, backend):
    reader = DiceReader(
        _dynamic(tmp_path, 20), faces=False, table=None, second_look=640, backend=backend
    )
    assert reader.second_look == 640 and reader.second_look_below == 24
    seen = _spy(reader)
    photo = np.zeros((480, 640, 3), np.uint8)
    (die,) = reader.read(photo).dice
    # first at 320x256 (die 20 px < 24), then again at 640x480; the second reading is kept:
    # input (150, 118)-(170, 138) at gain 1 is the same box in the photo
    assert seen == [(1, 3, 256, 320), (1, 3, 480, 640)]
    np.testing.assert_allclose(die.box, (150, 118, 170, 138), atol=1e-6)
    detector = reader._session
    if backend == "onnxruntime":  # a session of its own: neither sees its input shape change
        assert set(detector._sessions) == {0, 1}
        assert detector._sessions[0] is not detector._sessions[1]
    else:  # one OpenVINO build per input shape met (warm-up shapes included)
        assert {(1, 3, 256, 320), (1, 3, 480, 640)} <= set(detector._static)


def test_large_dice_fixed_models_and_zero_get_one_look(tmp_path, monkeypatch):
    photo = np.zeros((480, 640, 3), np.uint8)
    big = DiceReader(_dynamic(tmp_path, 30), faces=False, table=None, second_look=640)
    seen = _spy(big)
    (die,) = big.read(photo).dice
    assert seen == [(1, 3, 256, 320)]
    np.testing.assert_allclose(die.box, (290, 210, 350, 270), atol=1e-6)  # 8 rows of pad
    small = _dynamic(tmp_path, 20)
    assert DiceReader(small, faces=False, table=None, second_look=0).second_look is None
    assert DiceReader(small, faces=False, table=None, second_look=320).second_look is None
    monkeypatch.setenv("DICECAM_SECOND_LOOK", "0")
    assert DiceReader(small, faces=False, table=None).second_look is None
    monkeypatch.setenv("DICECAM_SECOND_LOOK", "512")
    monkeypatch.setenv("DICECAM_SECOND_LOOK_BELOW", "10")
    off = DiceReader(small, faces=False, table=None)
    assert (off.second_look, off.second_look_below) == (512, 10)
    seen = _spy(off)
    off.read(photo)
    assert seen == [(1, 3, 256, 320)]  # 20 px is not under 10
    monkeypatch.delenv("DICECAM_SECOND_LOOK")
    # by default half as large again as the model's size, on its stride: 320 -> 480
    assert DiceReader(small, faces=False, table=None).second_look == 480
    fixed = models.make_model(
        tmp_path / "fixed.onnx", models.raw_preds([(160, 128, 20, 20, {4: 0.9})])
    )
    assert DiceReader(fixed, faces=False, table=None, second_look=640).second_look is None


def test_imgsz_sets_the_first_look_and_the_second_look_follows_it(tmp_path, monkeypatch):
    photo = np.zeros((480, 640, 3), np.uint8)
    # the test model's own size is 320; a 20 px die is small at any first look
    reader = DiceReader(_dynamic(tmp_path, 20), faces=False, table=None, imgsz=384, mirror=False)
    assert reader.imgsz == (384, 384) and reader.second_look == 576  # 1.5 x 384
    seen = _spy(reader)
    reader.read(photo)
    assert seen == [(1, 3, 288, 384), (1, 3, 448, 576)]  # 432 padded to the stride
    # a 30 px die at a 256 first look: one look, its box mapped back at that look's gain (0.4)
    big = _dynamic(tmp_path, 30)
    monkeypatch.setenv("DICECAM_IMGSZ", "256")
    reader = DiceReader(big, faces=False, table=None, mirror=False)
    assert reader.imgsz == (256, 256)
    seen = _spy(reader)
    (die,) = reader.read(photo).dice
    assert seen == [(1, 3, 192, 256)]
    np.testing.assert_allclose(die.box, (362.5, 282.5, 437.5, 357.5), atol=1e-6)
    # the argument wins over the setting, and the model's own size is the default
    assert DiceReader(big, faces=False, table=None, imgsz=320).imgsz == (320, 320)
    monkeypatch.delenv("DICECAM_IMGSZ")
    assert DiceReader(big, faces=False, table=None).imgsz == (320, 320)


def test_imgsz_must_fit_the_model(tmp_path):
    dynamic = _dynamic(tmp_path, 20)
    with pytest.raises(ValueError, match="multiple of the model's stride 32, got 500"):
        DiceReader(dynamic, faces=False, table=None, imgsz=500)
    with pytest.raises(ValueError, match="multiple of the model's stride 32, got 0"):
        DiceReader(dynamic, faces=False, table=None, imgsz=0)
    fixed = models.make_model(
        tmp_path / "fixed.onnx", models.raw_preds([(160, 128, 20, 20, {4: 0.9})])
    )
    with pytest.raises(ValueError, match=r"fixed 320x320 input.*got imgsz 640"):
        DiceReader(fixed, faces=False, table=None, imgsz=640)
    # its own size is no change
    assert DiceReader(fixed, faces=False, table=None, imgsz=320).imgsz == (320, 320)


def test_a_first_look_at_small_dice_is_neither_mirrored_nor_read(tmp_path, monkeypatch):
    # one doubtful 5 (0.3: under twice the 0.25 threshold) of 20 px: the photo is read again
    # at 640, so its first look gets no mirror look and its dice are not checked nor read
    preds = models.raw_preds([(160, 128, 20, 20, {4: 0.3})])
    path = models.make_model(tmp_path / "doubt.onnx", preds, batch="b", dynamic=True)
    reader = DiceReader(path, faces=False, table=None, second_look=640)
    seen = _spy(reader)
    import vision.passes as passes_module

    stages = []
    photo_dice = passes_module.photo_dice
    monkeypatch.setattr(
        passes_module,
        "photo_dice",
        lambda img, look, *a, **k: stages.append(len(look[0])) or photo_dice(img, look, *a, **k),
    )
    reader.read(np.zeros((480, 640, 3), np.uint8))
    # the first look, then the second look and its mirror image (the die is still doubtful)
    assert seen == [(1, 3, 256, 320), (1, 3, 480, 640), (1, 3, 480, 640)]
    assert len(stages) == 1  # the second look's dice only
    # a die as doubtful but large: one look, mirrored, and read
    big = models.raw_preds([(160, 128, 30, 30, {4: 0.3})])
    reader = DiceReader(
        models.make_model(tmp_path / "big.onnx", big, batch="b", dynamic=True),
        faces=False,
        table=None,
        second_look=640,
    )
    seen = _spy(reader)
    stages.clear()
    reader.read(np.zeros((480, 640, 3), np.uint8))
    assert seen == [(1, 3, 256, 320), (1, 3, 256, 320)] and len(stages) == 1


def test_batch_reads_only_the_small_dice_photos_again(tmp_path):
    # the same model, dice 20 px: every photo needs the second look
    reader = DiceReader(
        _dynamic(tmp_path, 20), faces=False, table=None, second_look=640, mirror=False
    )
    seen = _spy(reader)
    with_die = np.zeros((480, 640, 3), np.uint8)
    readings = reader.read_batch([with_die, with_die], batch_size=8)
    assert seen == [(2, 3, 256, 320), (2, 3, 480, 640)]
    assert [len(r.dice) for r in readings] == [1, 1]
    reader.conf = reader.second_look_conf = 0.95  # nothing found: it looks again, larger
    seen.clear()
    assert reader.read(with_die).dice == []
    assert seen == [(1, 3, 256, 320), (1, 3, 480, 640)]
    # in a batch, only the photos that want it are read again: large dice get one look
    large = DiceReader(
        _dynamic(tmp_path, 30), faces=False, table=None, second_look=640, mirror=False
    )
    seen = _spy(large)
    assert [len(r.dice) for r in large.read_batch([with_die] * 3, batch_size=8)] == [1, 1, 1]
    assert seen == [(3, 3, 256, 320)]


def _shrunk(name: str, factor: int) -> np.ndarray:
    """A sample photo shrunk ``factor`` times into a corner of a blurred copy of itself."""
    img = cv2.imread(str(SAMPLES / name))
    canvas = cv2.blur(img, (101, 101))
    small = cv2.resize(img, None, fx=1 / factor, fy=1 / factor, interpolation=cv2.INTER_AREA)
    canvas[: small.shape[0], : small.shape[1]] = small
    return canvas


def test_shipped_reader_finds_more_far_dice_with_the_second_look():
    truth = json.loads((SAMPLES / "truth.json").read_text())
    one, two = DiceReader(table=None, second_look=0), DiceReader(table=None)
    assert two.second_look == 768 and max(two.imgsz) < 768
    right_one = right_two = 0
    for name, t in truth.items():
        photo = _shrunk(name, 4)  # dice of 10-20 px in a 640x480 photo
        want = Counter(t["values"])
        right_one += sum((Counter(one.read(photo).values) & want).values())
        right_two += sum((Counter(two.read(photo).values) & want).values())
        # a photo of big dice reads the same either way
        full = cv2.imread(str(SAMPLES / name))
        assert two.read(full).values == one.read(full).values
    assert right_two > right_one


def test_faint_small_boxes_ask_for_the_second_look_but_are_never_read(tmp_path, monkeypatch):
    # one small 5 at confidence 0.15: under the reader's 0.25, over DICECAM_SECOND_LOOK_CONF (0.1)
    preds = models.raw_preds([(160, 128, 20, 20, {4: 0.15})])
    faint = models.make_model(tmp_path / "faint.onnx", preds, batch="b", dynamic=True)
    photo = np.zeros((480, 640, 3), np.uint8)
    reader = DiceReader(faint, faces=False, table=None, second_look=640, mirror=False)
    assert (reader.conf, reader.second_look_conf) == (0.25, 0.1)
    seen = _spy(reader)
    assert reader.read(photo).dice == []
    assert seen == [(1, 3, 256, 320), (1, 3, 480, 640)]
    # a faint large box counts too: the dice are not small, one look
    preds = models.raw_preds([(160, 128, 30, 30, {4: 0.15})])
    large = models.make_model(tmp_path / "large.onnx", preds, batch="b", dynamic=True)
    reader = DiceReader(large, faces=False, table=None, second_look=640, mirror=False)
    seen = _spy(reader)
    assert reader.read(photo).dice == [] and seen == [(1, 3, 256, 320)]
    # under DICECAM_SECOND_LOOK_CONF it does not: the first look saw no die, so it looks again
    monkeypatch.setenv("DICECAM_SECOND_LOOK_CONF", "0.2")
    strict = DiceReader(large, faces=False, table=None, second_look=640, mirror=False)
    seen = _spy(strict)
    assert strict.read(photo).dice == [] and seen == [(1, 3, 256, 320), (1, 3, 480, 640)]
    # a reader that keeps faint dice judges on what it keeps
    low = DiceReader(faint, faces=False, table=None, second_look=640, conf=0.05)
    assert low.second_look_conf == 0.05 and len(low.read(photo).dice) == 1


def test_a_photo_read_short_of_the_dice_count_gets_the_second_look(tmp_path, monkeypatch):
    photo = np.zeros((480, 640, 3), np.uint8)
    # a large 5, and a 3 that scores 0.3 minus 10 times the input's mean: on this black photo
    # 0.02 at 320x256 (16 grey rows of letterbox pad), 0.3 at 640x480 (no pad)
    preds = models.raw_preds([(100, 128, 30, 30, {4: 0.9}), (220, 128, 30, 30, {2: 0.3})])
    mask = np.zeros_like(preds)
    mask[4 + 2, 1] = -10.0
    path = models.make_model(
        tmp_path / "shy.onnx", preds, batch="b", dynamic=True, brightness_mask=mask
    )
    reader = DiceReader(path, faces=False, table=None, second_look=640)
    seen = _spy(reader)
    assert [d.value for d in reader.read(photo).dice] == [5]  # large dice: one look
    assert seen == [(1, 3, 256, 320)]
    seen.clear()
    two = reader.read(photo, expected_dice=2)  # one die short: the second look finds the 3
    assert seen == [(1, 3, 256, 320), (1, 3, 480, 640)]
    assert sorted(d.value for d in two.dice) == [3, 5] and two.missing == 0

    # a second look that finds no more: the first reading stays
    one_die = DiceReader(_dynamic(tmp_path, 30), faces=False, table=None, second_look=640)
    seen = _spy(one_die)
    (die,) = one_die.read(photo, expected_dice=2).dice
    assert seen == [(1, 3, 256, 320), (1, 3, 480, 640)]
    np.testing.assert_allclose(die.box, (290, 210, 350, 270), atol=1e-6)  # the first look's box
    monkeypatch.setenv("DICECAM_FIT_COUNT", "0")  # no count fit: no second look for it either
    off = DiceReader(path, faces=False, table=None, second_look=640)
    seen = _spy(off)
    assert len(off.read(photo, expected_dice=2).dice) == 1 and len(seen) == 1


def test_a_first_look_that_sees_no_die_takes_the_second_look(tmp_path):
    # one 5 at confidence 0.02 at the first look's size only (a far die: 0.3 once larger)
    preds = models.raw_preds([(160, 128, 20, 20, {4: 0.3})])
    mask = np.zeros_like(preds)
    mask[4 + 4, 0] = -10.0  # 0.3 - 10 x the input's mean: 0.02 with 16 grey rows of pad
    path = models.make_model(
        tmp_path / "far.onnx", preds, batch="b", dynamic=True, brightness_mask=mask
    )
    photo = np.zeros((480, 640, 3), np.uint8)
    reader = DiceReader(path, faces=False, table=None, second_look=640, mirror=False)
    seen = _spy(reader)
    (die,) = reader.read(photo).dice  # found by the second look only
    assert seen == [(1, 3, 256, 320), (1, 3, 480, 640)] and die.value == 5
    once = DiceReader(path, faces=False, table=None, second_look=0, mirror=False)
    assert once.read(photo).dice == []  # without a second look: nothing
