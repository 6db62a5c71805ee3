"""DiceReader's public API at its documented limits: the bounds of conf and iou, the arguments
that override their settings, how far a JPEG is decoded, and what a batch refuses."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vision import DiceReader, ImageError

pytest.importorskip("onnx", reason="the onnx package builds the test models")
from dicecam_testing import onnx_models as models  # noqa: E402

BLANK = np.zeros((320, 320, 3), np.uint8)


@pytest.fixture
def two_close(tmp_path) -> Path:
    """A 5 and a 3 whose boxes overlap with an IoU of 0.6 (same die read twice, or two dice)."""
    preds = models.raw_preds(
        [(100, 100, 40, 40, {4: 0.9}), (108, 100, 40, 40, {2: 0.8})]  # IoU 32*40 / 48*40 = 0.67
    )
    return models.make_model(tmp_path / "close.onnx", preds)


def _reader(path: Path, **kw) -> DiceReader:
    return DiceReader(
        path, **{"faces": False, "table": None, "cocked": False, "mirror": False, **kw}
    )


def test_conf_takes_its_ends_and_iou_takes_1_but_not_0(two_close):
    everything = _reader(two_close, conf=0.0).read(BLANK).dice  # conf 0: every box the model gives
    assert max(d.confidence for d in everything) == pytest.approx(0.9)
    assert _reader(two_close, conf=1.0).read(BLANK).dice == []
    with pytest.raises(
        ValueError, match=r"^expected 0 <= conf <= 1 and 0 < iou <= 1, got 0.25, 0.0$"
    ):
        _reader(two_close, iou=0)
    with pytest.raises(ValueError, match=r"got -0.01, 0.5$"):
        _reader(two_close, conf=-0.01)
    with pytest.raises(ValueError, match=r"got 0.25, 1.01$"):
        _reader(two_close, iou=1.01)


def test_the_iou_argument_overrides_the_setting(two_close, monkeypatch):
    monkeypatch.setenv("DICECAM_IOU", "0.5")
    assert [d.value for d in _reader(two_close).read(BLANK).dice] == [5]  # one die, the likelier
    both = _reader(two_close, iou=0.9)
    assert both.iou == 0.9 and [d.value for d in both.read(BLANK).dice] == [5, 3]
    monkeypatch.setenv("DICECAM_IOU", "0.9")
    assert [d.value for d in _reader(two_close).read(BLANK).dice] == [5, 3]
    assert [d.value for d in _reader(two_close, iou=1.0).read(BLANK).dice] == [5, 3]


def _decoded_widths(reader: DiceReader, monkeypatch, photo: Path) -> list[int]:
    """The width each photo is decoded at before the reader reads it."""
    import vision.reader

    widths: list[int] = []
    read_chunk = vision.reader.read_chunk

    def spy(reader, loaded, expected):
        widths.extend(img.rgb.shape[1] for img, _ in loaded)
        return read_chunk(reader, loaded, expected)

    monkeypatch.setattr(vision.reader, "read_chunk", spy)
    reading = reader.read(photo)
    assert (reading.width, reading.height) == (4000, 3000)  # boxes in the photo's own pixels
    return widths


def test_a_jpeg_decodes_three_times_larger_for_the_face_classifier(tmp_path, monkeypatch):
    """A 4000 px JPEG decodes at 1/8 (500 px, enough for a 320 px look) without a classifier,
    at 1/4 (1000 px) with one, whose crops read each die at its own scale."""
    detector = models.make_model(
        tmp_path / "r.onnx", models.raw_preds([(160, 160, 40, 40, {4: 0.9})])
    )
    photo = tmp_path / "big.jpg"
    Image.new("RGB", (4000, 3000), (120, 120, 120)).save(photo, quality=70)
    plain = _reader(detector)
    assert plain.decode_side == 320 and _decoded_widths(plain, monkeypatch, photo) == [500]
    faces = models.make_classifier(
        tmp_path / "faces.onnx", np.zeros(7, np.float32), np.zeros(7, np.float32)
    )
    reader = _reader(detector, faces=faces)
    assert reader.decode_side == 960 and _decoded_widths(reader, monkeypatch, photo) == [1000]


def test_second_look_arguments_are_checked_and_override_their_settings(tmp_path, monkeypatch):
    preds = models.raw_preds([(160, 128, 20, 20, {4: 0.9})])
    dyn = models.make_model(tmp_path / "dyn.onnx", preds, batch="b", dynamic=True)
    with pytest.raises(ValueError, match=r"^expected second_look >= 0 \(0: none\), got -1$"):
        _reader(dyn, second_look=-1)
    monkeypatch.setenv("DICECAM_SECOND_LOOK_BELOW", "10")
    monkeypatch.setenv("DICECAM_SECOND_LOOK", "640")
    reader = _reader(dyn, second_look_below=30, second_look=0)
    assert (reader.second_look, reader.second_look_below) == (None, 30.0)
    # its 20 px die is small to the argument's 30, not to the setting's 10: read again at 640
    reader = _reader(dyn, second_look_below=30)
    seen: list[tuple[int, ...]] = []
    run = reader._run
    reader._run = lambda blob, **kw: seen.append(blob.shape) or run(blob, **kw)
    reader.read(np.zeros((480, 640, 3), np.uint8))
    assert seen == [(1, 3, 256, 320), (1, 3, 480, 640)]


def test_a_batch_refuses_a_size_under_1_and_a_single_photo_of_bytes(two_close, tmp_path):
    reader = _reader(two_close)
    with pytest.raises(ValueError, match=r"^expected batch_size >= 1, got 0$"):
        reader.read_batch([BLANK], batch_size=0)
    png = tmp_path / "one.png"
    Image.fromarray(BLANK).save(png)
    for one in (png.read_bytes(), bytearray(png.read_bytes()), memoryview(png.read_bytes())):
        name = type(one).__name__
        with pytest.raises(TypeError, match=f"read_batch takes a list of images, got one {name}"):
            reader.read_batch(one)
    assert len(reader.read_batch([png.read_bytes()])[0].dice) == 1


def test_a_bad_photo_is_named_by_its_place_in_a_batch_only(two_close, tmp_path):
    """A model exported with a fixed batch of 1 reads a batch one photo at a time: a bad first
    photo was said with no place, as if it were read() alone."""
    reader = _reader(two_close)
    assert reader.fixed_batch == 1
    with pytest.raises(ImageError, match=r"^not an image \(expected JPEG"):
        reader.read(b"not a photo")
    for batch_size in (1, 8):
        with pytest.raises(ImageError, match=r"^image 0 of the batch: not an image"):
            reader.read_batch([b"not a photo", BLANK], batch_size=batch_size)
    with pytest.raises(ImageError, match=r"^image 0 of the batch: not an image"):
        reader.read_batch([b"not a photo"])  # a list of one is still a batch
    with pytest.raises(ImageError, match=r"^image 2 of the batch: "):
        reader.read_batch([BLANK, BLANK, b"not a photo"])
    missing = tmp_path / "gone.jpg"
    with pytest.raises(ImageError) as named:
        reader.read_batch([BLANK, missing])
    assert "of the batch" not in str(named.value) and str(missing) in str(named.value)


def test_faint_dice_join_only_with_a_die_check_beside_the_face_classifier(tmp_path):
    """DICECAM_SURE_FAINT needs both models: with the face classifier alone, a faint box is
    not asked about (there is no die check to ask)."""
    preds = models.raw_preds([(100, 100, 30, 30, {0: 0.6}), (220, 200, 30, 30, {2: 0.1})])
    detector = models.make_model(tmp_path / "faint.onnx", preds)
    faces = models.make_classifier(
        tmp_path / "faces.onnx",
        np.array([0, 0, 0, 0, 0, 1.0, 0], np.float32),
        np.array([0, 9.0, 0, 0, 0, 0, 0], np.float32),
    )
    reader = _reader(detector, faces=faces, verify=False)
    assert reader.faces is not None and reader.sure_faint is None
    reading = reader.read(np.full((320, 320, 3), 230, np.uint8))
    assert [(d.value, d.faint) for d in reading.dice] == [(2, False)]


def test_the_pixel_limit_settings_guard_the_header_and_the_decoded_photo(
    two_close, tmp_path, monkeypatch
):
    png = tmp_path / "wide.png"
    Image.new("RGB", (300, 200), (90, 90, 90)).save(png)
    jpeg = tmp_path / "big.jpg"
    Image.new("RGB", (4000, 3000), (90, 90, 90)).save(jpeg, quality=70)
    monkeypatch.setenv("DICECAM_MAX_IMAGE_PIXELS", "50000")
    with pytest.raises(ImageError, match=r"^image too large: .*wide\.png is 300x200"):
        _reader(two_close).read(png)
    monkeypatch.delenv("DICECAM_MAX_IMAGE_PIXELS")
    monkeypatch.setenv("DICECAM_MAX_DECODED_PIXELS", "1000000")
    reader = _reader(two_close)
    huge = tmp_path / "huge.png"
    Image.new("RGB", (1200, 1000)).save(huge)
    with pytest.raises(ImageError, match=r"^image too large to decode: .*huge\.png is 1200x1000"):
        reader.read(huge)
    # 12 megapixels in its header, but decoded at 1/8 (500x375): under the decoded limit
    reading = reader.read(jpeg)
    assert (reading.width, reading.height) == (4000, 3000)


def test_the_threads_argument_overrides_dicecam_threads(two_close, monkeypatch):
    def threads(reader: DiceReader) -> int:
        return reader._session._sessions[0].get_session_options().intra_op_num_threads

    monkeypatch.setenv("DICECAM_THREADS", "3")
    assert threads(_reader(two_close, backend="onnxruntime")) == 3
    assert threads(_reader(two_close, backend="onnxruntime", threads=1)) == 1


def test_a_batch_checks_the_dice_count_as_a_single_read_does(two_close):
    reader = _reader(two_close)
    for bad, said in ((0, "0"), (True, "True"), (2.5, "2.5")):
        with pytest.raises(
            ValueError, match=rf"dice count of 1 or more, got expected_dice={said}$"
        ):
            reader.read_batch([BLANK], expected_dice=bad)
    (reading,) = reader.read_batch([BLANK], expected_dice=np.int8(2))
    assert type(reading.expected_dice) is int and reading.expected_dice == 2
