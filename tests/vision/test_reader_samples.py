"""The shipped reader on the committed sample photos (``datasets/samples/``) reads the true values.

``datasets/samples/truth.json`` maps each photo to its values, either ``{"a.jpg": [1, 3, 5]}`` or
``{"a.jpg": {"values": [1, 3, 5], "off_table": 0, "cocked": 0}}`` (or a list of objects with an
``"image"`` key). Values are compared as multisets; ``off_table``/``cocked`` counts when given.
A photo the shipped model is known to misread carries ``"known_misread": "why"``: its test is a
strict xfail, so it fails (and the mark must go) as soon as a model reads it right.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vision import DiceReader

REPO = Path(__file__).resolve().parents[2]
MODEL = REPO / "models" / "dicecam-reader.onnx"
SAMPLES = REPO / "datasets" / "samples"


def _truth() -> dict[str, dict]:
    path = SAMPLES / "truth.json"
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, list):
        data = {item["image"]: item for item in data}
    return {name: (t if isinstance(t, dict) else {"values": t}) for name, t in data.items()}


TRUTH = _truth()


@pytest.fixture(scope="module")
def reader() -> DiceReader:
    if not MODEL.is_file():
        pytest.skip(f"shipped model not committed yet: {MODEL}")
    return DiceReader(MODEL)


def _cases() -> list:
    return [
        pytest.param(
            name,
            marks=pytest.mark.xfail(strict=True, reason=TRUTH[name]["known_misread"])
            if TRUTH[name].get("known_misread")
            else (),
        )
        for name in sorted(TRUTH)
    ]


@pytest.mark.skipif(not TRUTH, reason=f"no sample photos with truth at {SAMPLES / 'truth.json'}")
@pytest.mark.parametrize("name", _cases())
def test_sample_photo_reads_true_values(reader, name):
    truth = TRUTH[name]
    reading = reader.read(SAMPLES / name, expected_dice=truth.get("expected_dice"))
    assert sorted(reading.values) == sorted(truth["values"]), reading.to_dict()
    for key in ("off_table", "cocked"):
        if key in truth:
            assert getattr(reading, key) == truth[key], reading.to_dict()


@pytest.mark.skipif(not TRUTH, reason=f"no sample photos with truth at {SAMPLES / 'truth.json'}")
def test_batch_reads_the_same_as_single_reads(reader):
    names = sorted(TRUTH)
    batch = reader.read_batch([SAMPLES / n for n in names], batch_size=4)
    single = [reader.read(SAMPLES / n) for n in names]
    assert [sorted(r.values) for r in batch] == [sorted(r.values) for r in single]


@pytest.mark.skipif(not TRUTH, reason=f"no sample photos with truth at {SAMPLES / 'truth.json'}")
def test_a_sample_saved_as_heic_the_way_an_iphone_does_reads_the_same(reader, tmp_path):
    """An iPhone saves HEIC, rotated by an EXIF orientation: the reading is the JPEG's, turned."""
    pillow_heif = pytest.importorskip(
        "pillow_heif", reason="pillow-heif: pip install 'dicecam[heif]'"
    )
    from PIL import Image

    name = next(n for n in sorted(TRUTH) if not TRUTH[n].get("known_misread"))
    jpeg = reader.read(SAMPLES / name)
    with Image.open(SAMPLES / name) as im:
        # stored turned a quarter to the left, with the tag that turns it back for the viewer
        exif = Image.Exif()
        exif[0x0112] = 6
        heif = pillow_heif.from_pillow(im.transpose(Image.Transpose.ROTATE_90))
        heif.save(tmp_path / "IMG_0001.HEIC", quality=92, exif=exif.tobytes())
    reading = reader.read(tmp_path / "IMG_0001.HEIC")
    assert (reading.width, reading.height) == (jpeg.width, jpeg.height)
    assert sorted(reading.values) == sorted(TRUTH[name]["values"])
    for a, b in zip(
        sorted(reading.dice, key=lambda d: d.box[0]),
        sorted(jpeg.dice, key=lambda d: d.box[0]),
        strict=True,
    ):
        assert a.value == b.value
        assert a.box == pytest.approx(b.box, abs=6)  # in the photo as shown, like the JPEG's
