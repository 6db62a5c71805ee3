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
import time
import zlib
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st
from PIL import Image

from vision.io import ImageError, LoadedImage, load_image

SAMPLE = Path(__file__).parents[2] / "datasets" / "samples" / "roll-s21-031.jpg"
MAX_IMAGE_PIXELS = 16_000_000
MAX_DECODED_PIXELS = 4_000_000
EXTREMES = (0, 1, 2, 255, 0x7FFF, 0xFFFF, 0x10000, 0x7FFFFFFF, 0xFFFFFFFF)


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


@cache
def _seeds() -> dict[str, bytes]:
    """The files mutated: the sample photo and other formats of a small version of it."""
    small = Image.open(SAMPLE).convert("RGB").resize((80, 60))
    rgba = small.convert("RGBA")
    rgba.putalpha(160)
    return {
        "jpeg": SAMPLE.read_bytes(),
        "jpeg-exif6": _encode(small, "JPEG", exif=_exif(6)),
        "png": _encode(small, "PNG"),
        "png-rgba-exif6": _encode(rgba, "PNG", exif=_exif(6)),
        "png-palette": _encode(small.convert("P"), "PNG", transparency=0),
        "webp": _encode(small, "WEBP", quality=60),
        "gif": _encode(small, "GIF", save_all=True, append_images=[small.rotate(90)]),
        "tiff-exif6": _encode(small, "TIFF", exif=_exif(6)),
        "tiff-jpeg": _encode(small, "TIFF", compression="jpeg"),
        "bmp": _encode(small.convert("L"), "BMP"),
        "avif": _encode(small, "AVIF", quality=50),
    }


def _header_fields(data: bytes) -> list[tuple[int, str]]:
    """(offset, struct format) of the fields that size a file: dimensions, chunk and segment
    lengths, TIFF/EXIF tag values (orientation, strip offsets and counts, the next-IFD link)."""
    fields: list[tuple[int, str]] = []
    if data.startswith(b"\x89PNG"):
        fields += [(8, ">I"), (16, ">I"), (20, ">I")]  # IHDR length, width, height
    elif data.startswith(b"GIF"):
        fields += [(6, "<H"), (8, "<H")]  # logical screen
        frame = data.find(b"\x2c", 13)
        fields += [(frame + k, "<H") for k in (1, 3, 5, 7)] if frame > 0 else []
    elif data.startswith(b"BM"):
        fields += [(2, "<I"), (10, "<I"), (14, "<I"), (18, "<i"), (22, "<i"), (28, "<H")]
    elif data.startswith(b"\xff\xd8"):
        sof = data.find(b"\xff\xc0")
        fields += [(sof + 2, ">H"), (sof + 5, ">H"), (sof + 7, ">H")] if sof > 0 else []
    for box in (b"ispe", b"VP8X", b"RIFF"):
        at = data.find(box)
        fields += [(at + 4, "<I"), (at + 8, ">I"), (at + 12, ">I")] if at >= 0 else []
    exif = data.find(b"Exif\x00\x00")
    tiff = 0 if data[:2] in (b"II", b"MM") else exif + 6 if exif >= 0 else -1
    if 0 <= tiff <= len(data) - 8:
        e = "<" if data[tiff : tiff + 2] == b"II" else ">"
        ifd = tiff + struct.unpack_from(e + "I", data, tiff + 4)[0]
        n = struct.unpack_from(e + "H", data, ifd)[0] if ifd + 2 <= len(data) else 0
        fields += [(tiff + 4, e + "I"), (ifd + 2 + 12 * n, e + "I")]  # first and next IFD
        for k in range(min(n, 40)):
            entry = ifd + 2 + 12 * k
            fields += [(entry + 4, e + "I"), (entry + 8, e + "H"), (entry + 8, e + "I")]
    return [(at, fmt) for at, fmt in fields if 0 <= at <= len(data) - struct.calcsize(fmt)]


@st.composite
def mutated(draw: st.DrawFn) -> tuple[str, bytes]:
    """A seed file with one to three mutations."""
    name = draw(st.sampled_from(sorted(_seeds())))
    data = bytearray(_seeds()[name])
    for _ in range(draw(st.integers(1, 3))):
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1))
        op = draw(st.sampled_from(["flip", "byte", "cut", "insert", "repeat", "delete", "field"]))
        if op == "flip":
            data[at] ^= 1 << draw(st.integers(0, 7))
        elif op == "byte":
            data[at] = draw(st.sampled_from([0, 1, 0x7F, 0x80, 0xFF]))
        elif op == "cut":
            del data[at:]
        elif op == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=64))
        elif op == "repeat":
            run = bytes(data[at : at + draw(st.sampled_from([2, 16, 300]))])
            data[at:at] = run * draw(st.sampled_from([2, 20]))
        elif op == "delete":
            del data[at : at + draw(st.sampled_from([1, 4, 100]))]
        elif fields := _header_fields(bytes(data)):
            offset, fmt = draw(st.sampled_from(fields))
            value = draw(st.sampled_from([*EXTREMES, 3, 5, 6, 8, 9]))
            bits = 8 * struct.calcsize(fmt)
            value &= (1 << bits) - 1
            if fmt[-1].islower() and value >= 1 << (bits - 1):
                value -= 1 << bits
            struct.pack_into(fmt, data, offset, value)
            if data.startswith(b"\x89PNG") and offset in (16, 20) and len(data) >= 33:
                # keep IHDR's CRC right
                struct.pack_into(">I", data, 29, zlib.crc32(bytes(data[12:29])))
    return name, bytes(data)


def _check(img: LoadedImage) -> None:
    """A decoded image of sane size whose geometry maps back to the photo as shown."""
    h, w = img.rgb.shape[:2]
    assert img.rgb.dtype == np.uint8 and img.rgb.shape[2:] == (3,)
    assert 1 <= w <= img.width and 1 <= h <= img.height
    assert img.width * img.height <= MAX_IMAGE_PIXELS and w * h <= MAX_DECODED_PIXELS
    # a JPEG decoded at reduced scale rounds each side up: at most a pixel off
    assert abs(img.scale_x * img.height - h) <= 1 + img.scale_x, (img.rgb.shape, img.width)


@settings(
    derandomize=True,
    max_examples=1500,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(case=mutated(), min_long_side=st.sampled_from([None, 256]))
def test_mutated_photos_decode_or_raise_image_error(case, min_long_side):
    """Each of 1500 mutated files (a fixed seed) decodes to a sane image or raises ImageError
    naming the data, in under 2 s; the limits are lowered to keep decoded garbage quick."""
    name, data = case
    note(f"{name} mutated: {len(data)} bytes, {data[:64].hex()}...")
    t0 = time.perf_counter()
    try:
        img = load_image(
            data,
            min_long_side=min_long_side,
            max_image_pixels=MAX_IMAGE_PIXELS,
            max_decoded_pixels=MAX_DECODED_PIXELS,
        )
    except ImageError as exc:
        assert "<bytes>" in str(exc), str(exc)
        event(f"{name}: ImageError {str(exc).split(':')[0]}")
    else:
        _check(img)
        event(f"{name}: decoded")
    assert time.perf_counter() - t0 < 2.0, name


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


def test_an_eps_is_not_an_image_and_runs_no_ghostscript(tmp_path, monkeypatch):
    """Pillow opens any format it knows: an EPS was rendered by running Ghostscript on it
    (where installed), with no time limit (a PostScript ``{} loop`` never ends), and a
    failure left load_image as CalledProcessError. Only the photo formats open now."""
    from PIL import EpsImagePlugin

    ran = tmp_path / "ghostscript-ran"
    gs = tmp_path / "gs"
    gs.write_text(f"#!/bin/sh\ntouch {ran}\nexit 1\n")
    gs.chmod(0o755)
    monkeypatch.setattr(EpsImagePlugin, "gs_binary", str(gs))
    eps = b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 64 48\n{} loop\n"
    path = tmp_path / "roll.eps"
    path.write_bytes(eps)
    for source in (eps, path):
        with pytest.raises(ImageError, match=r"not an image \(expected JPEG, PNG"):
            load_image(source)
    assert not ran.exists()
    # Pillow's other formats are refused the same way; the photo formats still open
    for fmt in ("PPM", "TGA", "ICO", "PCX"):
        with pytest.raises(ImageError, match="not an image"):
            load_image(_encode(_photo(), fmt))
    for fmt in ("JPEG", "PNG", "WEBP", "AVIF", "BMP", "TIFF", "GIF"):
        assert load_image(_encode(_photo(), fmt)).rgb.shape == (48, 64, 3), fmt
