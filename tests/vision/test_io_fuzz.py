"""load_image under mutated input: a decoded image of sane size or an ImageError, nothing else.

Real photos (a sample roll, and PNG, WebP, GIF, TIFF, BMP and AVIF versions of it) are mutated
byte-wise (flips, truncations, inserted, repeated and deleted runs) and in their header fields
(dimensions set to 0 or 65535, EXIF orientation 0, 9 or 65535, ...). Each outcome must be an RGB
image no larger than the limits, its geometry consistent, or :class:`vision.io.ImageError`
naming the data, within a couple of seconds. The cases here are each a bug fuzzing found.
"""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from vision.io import ImageError, load_image


def _photo(w: int = 64, h: int = 48) -> Image.Image:
    y, x = np.mgrid[0:h, 0:w]
    rgb = np.dstack([x * 255 // w, y * 255 // h, (x // 8 + y // 8) % 2 * 200])
    return Image.fromarray(rgb.astype(np.uint8))


def _encode(im: Image.Image, fmt: str, **kw) -> bytes:
    out = io.BytesIO()
    im.save(out, fmt, **kw)
    return out.getvalue()


def _exif(orientation: int) -> Image.Exif:
    exif = Image.Exif()
    exif[0x0112] = orientation
    return exif


# -- each bug the fuzzing found ------------------------------------------------------------


@pytest.mark.parametrize("compression", ["raw", "jpeg"])
@pytest.mark.parametrize("orientation", [5, 6, 8])
def test_tiff_turned_by_exif_reports_its_upright_size(orientation, compression):
    """Pillow turns a TIFF with EXIF orientation 5-8 itself, its size the upright one from the
    start: dicecam swapped width and height once more, so a 64x48 TIFF shown 48x64 said
    64x48, and the reader's boxes were mapped back with scales of 0.75 and 1.33."""
    photo = _photo()
    tiff = _encode(photo, "TIFF", exif=_exif(orientation), compression=compression)
    png = _encode(photo, "PNG", exif=_exif(orientation))
    got, want = load_image(tiff), load_image(png)
    assert (got.width, got.height) == (want.width, want.height) == (48, 64)
    assert got.rgb.shape == want.rgb.shape == (64, 48, 3)
    assert got.scale_x == got.scale_y == 1.0
    tolerance = 0 if compression == "raw" else 12  # JPEG in TIFF is lossy
    assert np.abs(got.rgb.astype(int) - want.rgb.astype(int)).mean() <= tolerance


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


@pytest.mark.parametrize(
    ("chunk", "reason"),
    [
        (b"IHDR", "Truncated IHDR chunk"),  # opens the file: Image.open raised ValueError
        (b"gAMA", "Truncated gAMA chunk"),
        (b"sRGB", "Truncated sRGB chunk"),
    ],
)
def test_png_with_an_empty_chunk_is_a_clear_error(chunk, reason):
    """A PNG chunk too short for its kind (its CRC right) raised Pillow's ValueError out of
    load_image: the service answered 500 instead of 415."""
    png = _encode(_photo(), "PNG")
    if chunk == b"IHDR":
        broken = png[:8] + struct.pack(">I", 0) + png[12:]
    else:
        broken = png[:33] + _chunk(chunk, b"") + png[33:]
    with pytest.raises(ImageError, match=rf"truncated or corrupt image: <bytes> \({reason}\)"):
        load_image(broken)


def test_corrupt_avif_is_a_clear_error():
    """libavif's failures come out of Pillow as RuntimeError, at opening (an unknown image
    item) and at decoding (the AV1 data of zeros): both left load_image as RuntimeError."""
    avif = _encode(_photo(), "AVIF")
    mdat = avif.find(b"mdat") + 4
    cases = {
        avif.replace(b"av01", b"av02"): "Missing or empty image item",
        avif[:mdat] + bytes(len(avif) - mdat): "Decoding of color planes failed",
    }
    for data, reason in cases.items():
        with pytest.raises(ImageError, match=rf"truncated or corrupt image: <bytes> \(.*{reason}"):
            load_image(data)
