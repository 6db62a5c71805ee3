"""DiceReader on tiny ONNX models with known outputs: decoding, letterbox maths, batches, errors."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vision import DiceReader, ImageError, ModelError
from vision.reader import letterbox, nms

pytest.importorskip("onnx", reason="the onnx package builds the test models")
from dicecam_testing import onnx_models as models  # noqa: E402


@pytest.fixture
def one_die_model(tmp_path) -> Path:
    # a 5 at input pixels (140, 140)-(180, 180) of a 320x320 input
    return models.make_model(
        tmp_path / "one.onnx", models.raw_preds([(160, 160, 40, 40, {4: 0.9})])
    )


def test_missing_model_names_path_and_how_to_get_one(tmp_path):
    with pytest.raises(ModelError) as exc:
        DiceReader(tmp_path / "nope.onnx")
    assert str(tmp_path / "nope.onnx") in str(exc.value)
    assert "DICECAM_MODEL" in str(exc.value)


def test_default_model_comes_from_dicecam_model(one_die_model, monkeypatch):
    monkeypatch.setenv("DICECAM_MODEL", str(one_die_model))
    assert DiceReader().model_path == one_die_model


def test_thresholds_come_from_settings_and_are_checked(one_die_model, monkeypatch):
    monkeypatch.setenv("DICECAM_CONF", "0.95")
    monkeypatch.setenv("DICECAM_IOU", "0.3")
    reader = DiceReader(one_die_model)
    assert (reader.conf, reader.iou) == (0.95, 0.3)
    assert reader.read(np.zeros((32, 32, 3), np.uint8)).dice == []  # the 0.9 die is below 0.95
    with pytest.raises(ValueError, match="expected 0 <= conf <= 1"):
        DiceReader(one_die_model, conf=1.5)


def test_not_an_onnx_file_is_a_model_error(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"this is not a model")
    with pytest.raises(ModelError, match="cannot load reader model"):
        DiceReader(bad)


def test_model_without_all_six_faces_is_refused(tmp_path):
    path = models.make_model(
        tmp_path / "m.onnx", models.raw_preds([], nc=2), names="{0: 'die', 1: 'cup'}"
    )
    with pytest.raises(ModelError, match="expected classes named '1' to '6'"):
        DiceReader(path)


def test_box_maps_back_through_letterbox(one_die_model):
    reader = DiceReader(one_die_model)
    # 640x480 -> gain 0.5, 320x240 placed 40 px from the top
    reading = reader.read(np.zeros((480, 640, 3), np.uint8))
    assert (reading.width, reading.height) == (640, 480)
    [die] = reading.dice
    assert die.value == 5 and not die.cocked and die.on_table
    assert die.confidence == pytest.approx(0.9)
    np.testing.assert_allclose(die.box, (280, 200, 360, 280), atol=1e-3)
    assert reading.latency_ms is not None and reading.latency_ms > 0


def test_exif_rotated_photo_reports_boxes_in_the_upright_image(one_die_model):
    buf = io.BytesIO()
    exif = Image.Exif()
    exif[0x0112] = 6  # stored sideways: viewers rotate it 90 degrees clockwise
    Image.new("RGB", (640, 480), (90, 90, 90)).save(buf, "JPEG", exif=exif)
    reading = DiceReader(one_die_model).read(buf.getvalue())
    assert (reading.width, reading.height) == (480, 640)
    # upright 480x640 -> gain 0.5, 240x320 placed 40 px from the left
    np.testing.assert_allclose(reading.dice[0].box, (200, 280, 280, 360), atol=1e-3)


def test_classes_cocked_threshold_and_class_agnostic_nms(tmp_path):
    preds = models.raw_preds(
        [
            (100, 100, 30, 30, {4: 0.9}),  # a 5
            (104, 100, 30, 30, {2: 0.7}),  # same die read as 3: suppressed
            (250, 250, 30, 30, {6: 0.8, 1: 0.3, 3: 0.1}),  # cocked, best face 2
            (50, 250, 30, 30, {0: 0.1}),  # below conf
        ]
    )
    reader = DiceReader(models.make_model(tmp_path / "m.onnx", preds), conf=0.25, mirror=False)
    dice = reader.read(np.zeros((320, 320, 3), np.uint8)).dice
    assert [(d.value, d.cocked) for d in dice] == [(5, False), (2, True)]
    assert dice[1].confidence == pytest.approx(0.8)
    assert (
        len(
            DiceReader(reader.model_path, conf=0.05, mirror=False)
            .read(np.zeros((32, 32, 3), np.uint8))
            .dice
        )
        == 3
    )


def test_model_without_names_metadata_uses_class_order(tmp_path):
    preds = models.raw_preds([(100, 100, 30, 30, {5: 0.9})], nc=6)
    reader = DiceReader(models.make_model(tmp_path / "m.onnx", preds, names=None))
    assert reader.read(np.zeros((320, 320, 3), np.uint8)).dice[0].value == 6


def test_end_to_end_export_rows(tmp_path):
    rows = np.zeros((300, 6), np.float32)
    rows[0] = (140, 140, 180, 180, 0.95, 1)  # a 2
    rows[1] = (10, 10, 40, 40, 0.6, 6)  # cocked: no face guess in this format
    reader = DiceReader(models.make_model(tmp_path / "e2e.onnx", rows, end2end=True))
    dice = reader.read(np.zeros((480, 640, 3), np.uint8)).dice
    assert sorted((d.value, d.cocked) for d in dice) == [(0, True), (2, False)]
    two = next(d for d in dice if d.value == 2)
    np.testing.assert_allclose(two.box, (280, 200, 360, 280), atol=1e-3)


def test_preprocessing_feeds_rgb_in_0_1_letterboxed_with_gray_114(one_die_model):
    reader = DiceReader(one_die_model)
    seen = []
    run = reader._run
    reader._run = lambda blob, **kw: seen.append(blob.copy()) or run(blob, **kw)
    red_bgr = np.zeros((480, 640, 3), np.uint8)
    red_bgr[..., 2] = 255
    reader.read(red_bgr)
    blob = seen[0]
    assert blob.shape == (1, 3, 320, 320) and blob.dtype == np.float32
    np.testing.assert_allclose(blob[0, :, 160, 160], (1.0, 0.0, 0.0))  # R, G, B
    np.testing.assert_allclose(blob[0, :, 10, 160], (114 / 255,) * 3, atol=1e-6)  # top pad
    np.testing.assert_allclose(blob[0, :, 310, 160], (114 / 255,) * 3, atol=1e-6)  # bottom pad


@pytest.mark.parametrize("kind", ["path", "bytes", "pil", "bgr", "gray", "rgba", "uint16"])
def test_every_input_kind_reads_the_same(one_die_model, tmp_path, kind):
    rgb = np.full((480, 640, 3), 80, np.uint8)
    png = tmp_path / "roll.png"
    Image.fromarray(rgb).save(png)
    source = {
        "path": png,
        "bytes": png.read_bytes(),
        "pil": Image.open(png),
        "bgr": rgb[..., ::-1].copy(),
        "gray": rgb[..., 0].copy(),
        "rgba": np.dstack([rgb, np.full((480, 640), 255, np.uint8)]),
        "uint16": rgb.astype(np.uint16) * 257,
    }[kind]
    reading = DiceReader(one_die_model).read(source)
    assert (reading.width, reading.height) == (640, 480)
    assert reading.image == (str(png) if kind == "path" else None)
    np.testing.assert_allclose(reading.dice[0].box, (280, 200, 360, 280), atol=1e-3)


def test_bad_inputs_raise_image_error(one_die_model, tmp_path):
    reader = DiceReader(one_die_model)
    empty = tmp_path / "empty.jpg"
    empty.touch()
    text = tmp_path / "notes.jpg"
    text.write_text("not a photo")
    for bad in (empty, text, tmp_path / "missing.jpg", b"", 42):
        with pytest.raises(ImageError):
            reader.read(bad)


def test_batch_keeps_order_and_matches_single_reads(tmp_path):
    # the die's score is the image's mean brightness: bright photos have a die, dark ones none
    preds = models.raw_preds([(160, 160, 40, 40, {})])
    mask = np.zeros_like(preds)
    mask[4 + 2, 0] = 1.0  # face 3
    bright = np.full((480, 640, 3), 255, np.uint8)
    dark = np.zeros((480, 640, 3), np.uint8)
    images = [bright, dark, bright, dark, dark]
    for batch in ("b", 1, 4):
        path = models.make_model(
            tmp_path / f"m{batch}.onnx", preds, batch=batch, brightness_mask=mask
        )
        reader = DiceReader(path, conf=0.5)
        assert reader.fixed_batch == (None if batch == "b" else batch)
        readings = reader.read_batch(images, batch_size=2)
        assert [len(r.dice) for r in readings] == [1, 0, 1, 0, 0]
        assert [len(reader.read(im).dice) for im in images] == [1, 0, 1, 0, 0]
        assert all(r.latency_ms > 0 for r in readings)


def test_dynamic_model_reads_each_photo_at_its_own_aspect(tmp_path):
    # a 5 at input pixels (150, 118)-(170, 138); imgsz 320, stride 32
    preds = models.raw_preds([(160, 128, 20, 20, {4: 0.9})])
    path = models.make_model(tmp_path / "dyn.onnx", preds, batch="b", dynamic=True)
    reader = DiceReader(path, faces=False, table=None, second_look=0)  # see test_second_look.py
    assert reader.dynamic and reader.imgsz == (320, 320)
    # 640x480 at gain 0.5 is 320x240, padded to 256 rows only (not 320): 8 rows above
    assert reader.input_shape(480, 640) == (256, 320)
    assert reader.input_shape(640, 480) == (320, 256)
    assert reader.input_shape(100, 100) == (320, 320)
    assert reader.input_shape(10, 1000) == (32, 320)
    landscape = np.zeros((480, 640, 3), np.uint8)
    portrait = np.zeros((640, 480, 3), np.uint8)
    seen: list[tuple[int, ...]] = []
    run = reader._run
    reader._run = lambda blob, **kw: seen.append(blob.shape) or run(blob, **kw)
    readings = reader.read_batch([landscape, portrait, landscape], batch_size=8)
    # one inference per input shape, each photo mapped back through its own letterbox
    assert sorted(seen) == [(1, 3, 320, 256), (2, 3, 256, 320)]
    expected = [(300, 220, 340, 260), (284, 236, 324, 276), (300, 220, 340, 260)]
    for reading, box in zip(readings, expected, strict=True):
        (die,) = reading.dice
        assert die.value == 5
        np.testing.assert_allclose(die.box, box, atol=1e-6)
    # a fixed-size model of the same predictions letterboxes to its square (40 rows above)
    fixed = models.make_model(tmp_path / "fixed.onnx", preds)
    (die,) = DiceReader(fixed, faces=False, table=None).read(landscape).dice
    assert not DiceReader(fixed, faces=False, table=None).dynamic
    np.testing.assert_allclose(die.box, (300, 156, 340, 196), atol=1e-6)


def test_large_jpeg_is_decoded_reduced_but_boxes_are_in_original_pixels(one_die_model, tmp_path):
    photo = tmp_path / "big.jpg"
    Image.new("RGB", (4000, 3000), (120, 120, 120)).save(photo, quality=70)
    reading = DiceReader(one_die_model).read(photo)
    assert (reading.width, reading.height) == (4000, 3000)
    # gain 320/4000 = 0.08; 320x240 placed 40 px down
    np.testing.assert_allclose(reading.dice[0].box, (1750, 1250, 2250, 1750), rtol=2e-3)


def test_letterbox_places_and_pads_like_ultralytics():
    img = np.full((100, 300, 3), 7, np.uint8)
    out, lb = letterbox(img, (320, 320))
    assert out.shape == (320, 320, 3)
    # 300x100 -> 320x107, 213 rows of padding split 106 above, 107 below
    assert lb.gain == pytest.approx(320 / 300) and lb.left == 0 and lb.top == 106
    assert (out[:106] == 114).all() and (out[106 + 107 :] == 114).all()
    assert (out[106 : 106 + 107] == 7).all()


def test_a_strip_one_pixel_across_is_read_not_crashed(one_die_model, tmp_path):
    """A 1 x 20000 photo scaled to the model's size is under a pixel across: it was a cv2 error
    (a 500 from the service), now it is read."""
    out, lb = letterbox(np.full((20000, 1, 3), 7, np.uint8), (320, 320))
    assert out.shape == (320, 320, 3) and lb.left == 159 and (out[:, 159] == 7).all()
    assert (out[:, :159] == 114).all() and (out[:, 160:] == 114).all()
    reader = DiceReader(one_die_model)
    for size in ((20000, 1), (1, 20000), (9000, 2)):
        path = tmp_path / f"strip-{size[0]}x{size[1]}.png"
        Image.new("RGB", size, (90, 90, 90)).save(path)
        reading = reader.read(path)  # this test model finds a die anywhere: it must fit
        assert (reading.width, reading.height) == size
        for d in reading.dice:
            x1, y1, x2, y2 = d.box
            assert 0 <= x1 <= x2 <= size[0] and 0 <= y1 <= y2 <= size[1], d.box


def test_nms_is_class_agnostic_and_keeps_best_first():
    boxes = np.array([[0, 0, 10, 10], [1, 0, 11, 10], [20, 20, 30, 30]], np.float32)
    scores = np.array([0.5, 0.9, 0.7], np.float32)
    assert nms(boxes, scores, 0.5).tolist() == [1, 2]
    assert nms(boxes, scores, 0.95).tolist() == [1, 2, 0]


def test_reader_runtime_never_imports_torch(one_die_model):
    code = (
        "import sys, numpy as np; import vision; "
        f"r = vision.DiceReader({str(one_die_model)!r}); r.read(np.zeros((48, 64, 3), np.uint8)); "
        "bad = [m for m in ('torch', 'ultralytics') if m in sys.modules]; "
        "assert not bad, bad"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_importing_vision_does_not_load_onnxruntime():
    code = "import sys, vision; assert 'onnxruntime' not in sys.modules"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
