"""load_image: every input kind, EXIF orientation, colour modes, huge and broken files."""

from __future__ import annotations

import io
import struct
import time
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from vision.io import ImageError, load_image


def _gradient(w: int = 64, h: int = 48) -> np.ndarray:
    y, x = np.mgrid[0:h, 0:w]
    return np.dstack([x * 255 // w, y * 255 // h, (x + y) % 256]).astype(np.uint8)


def test_path_bytes_pil_and_bgr_array_give_the_same_pixels(tmp_path):
    rgb = _gradient()
    png = tmp_path / "g.png"
    Image.fromarray(rgb).save(png)
    for source in (png, str(png), png.read_bytes(), Image.open(png), rgb[..., ::-1].copy()):
        img = load_image(source)
        assert img.rgb.dtype == np.uint8 and img.rgb.flags.c_contiguous
        np.testing.assert_array_equal(img.rgb, rgb)
        assert (img.width, img.height) == (64, 48)
    assert load_image(png).name == str(png)
    np.testing.assert_array_equal(load_image(png).bgr, rgb[..., ::-1])


@pytest.mark.parametrize("orientation", [3, 6, 8])
def test_exif_orientation_is_applied(orientation):
    rgb = _gradient(60, 40)
    exif = Image.Exif()
    exif[0x0112] = orientation
    buf = io.BytesIO()
    Image.fromarray(rgb).save(buf, "PNG", exif=exif)
    img = load_image(buf.getvalue())
    expected = {3: np.rot90(rgb, 2), 6: np.rot90(rgb, -1), 8: np.rot90(rgb, 1)}[orientation]
    assert (img.width, img.height) == (expected.shape[1], expected.shape[0])
    np.testing.assert_array_equal(img.rgb, expected)


def test_grayscale_palette_16bit_and_cmyk_files_become_rgb(tmp_path):
    gray = np.arange(48 * 64, dtype=np.uint32).reshape(48, 64) % 256
    cases = {
        "L": Image.fromarray(gray.astype(np.uint8)),
        "P": Image.fromarray(_gradient()).convert("P"),
        "I;16": Image.fromarray((gray * 257).astype(np.uint16)),
        "CMYK": Image.fromarray(_gradient()).convert("CMYK"),
    }
    for mode, im in cases.items():
        path = tmp_path / f"{mode.replace(';', '')}.{'jpg' if mode == 'CMYK' else 'png'}"
        im.save(path)
        img = load_image(path)
        assert img.rgb.shape == (48, 64, 3), mode
        if mode in ("L", "I;16"):
            np.testing.assert_array_equal(img.rgb[..., 1], gray.astype(np.uint8), err_msg=mode)


def test_transparent_pixels_are_composited_on_white(tmp_path):
    rgba = np.zeros((10, 10, 4), np.uint8)
    rgba[:5, :, :] = (200, 0, 0, 255)  # top half opaque red, bottom half fully transparent
    path = tmp_path / "a.png"
    Image.fromarray(rgba, "RGBA").save(path)
    img = load_image(path)
    assert tuple(img.rgb[0, 0]) == (200, 0, 0)
    assert tuple(img.rgb[9, 9]) == (255, 255, 255)
    la = Image.fromarray(rgba, "RGBA").convert("LA")
    assert load_image(la).rgb.shape == (10, 10, 3)


def test_numpy_layouts():
    bgr = _gradient()[..., ::-1].copy()
    rgb = _gradient()
    np.testing.assert_array_equal(load_image(bgr[..., 0]).rgb[..., 0], bgr[..., 0])  # gray
    np.testing.assert_array_equal(load_image(bgr[..., :1]).rgb[..., 2], bgr[..., 0])  # HxWx1
    bgra = np.dstack([bgr, np.full(bgr.shape[:2], 255, np.uint8)])
    np.testing.assert_array_equal(load_image(bgra).rgb, rgb)
    np.testing.assert_array_equal(load_image(bgr.astype(np.uint16) * 257).rgb, rgb)
    np.testing.assert_allclose(load_image(bgr / 255.0).rgb, rgb, atol=1)


def test_a_boolean_mask_is_read_black_and_white():
    mask = np.zeros((4, 6), bool)
    mask[:, 3:] = True
    rgb = load_image(mask).rgb
    assert rgb.shape == (4, 6, 3) and rgb[:, :3].max() == 0 and rgb[:, 3:].min() == 255


@pytest.mark.parametrize(
    ("array", "message"),
    [
        (np.zeros((4, 4, 2), np.uint8), "HxWx3"),
        (np.zeros((2, 3, 4, 3), np.uint8), "HxWx3"),
        (np.zeros((0, 5, 3), np.uint8), "no pixels"),
        (np.full((4, 4, 3), np.nan), "NaN"),
        (np.zeros((4, 4, 3), np.complex64), "dtype"),
    ],
)
def test_bad_arrays(array, message):
    with pytest.raises(ImageError, match=message):
        load_image(array)


def test_broken_files_give_clear_errors(tmp_path):
    empty = tmp_path / "empty.jpg"
    empty.touch()
    text = tmp_path / "notes.jpg"
    text.write_text("hello")
    jpeg = io.BytesIO()
    Image.fromarray(_gradient(640, 480)).save(jpeg, "JPEG")
    truncated = tmp_path / "cut.jpg"
    truncated.write_bytes(jpeg.getvalue()[:2000])
    cases = {
        empty: "empty file",
        text: "not an image",
        truncated: "truncated or corrupt",
        tmp_path / "missing.jpg": "no such file",
        tmp_path: "directory",
    }
    for source, message in cases.items():
        with pytest.raises(ImageError, match=message):
            load_image(source)
        assert str(source) in _message(source)
    for source, message in [(b"", "empty"), (b"GIF89a", "not an image"), (3.5, "expected a path")]:
        with pytest.raises(ImageError, match=message):
            load_image(source)


def _message(source) -> str:
    try:
        load_image(source)
    except ImageError as exc:
        return str(exc)
    raise AssertionError("no error")


def _png_header(width: int, height: int) -> bytes:
    """A PNG that declares a size but holds no pixel data (a decompression bomb's header)."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    out = b"\x89PNG\r\n\x1a\n"
    for kind, data in ((b"IHDR", ihdr), (b"IDAT", b""), (b"IEND", b"")):
        out += (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )
    return out


def test_huge_declared_size_is_refused_before_decoding():
    t0 = time.perf_counter()
    # the second is past Pillow's own limit, which it checks first: the same kind of message
    for w, h, mp in [(12000, 12000, 144), (100_000, 100_000, 10000)]:
        with pytest.raises(
            ImageError, match=rf"too large: <bytes> is (\d+x\d+ = )?{mp} megapixels \(limit 120\)"
        ):
            load_image(_png_header(w, h))
    assert time.perf_counter() - t0 < 1.0


def test_large_non_jpeg_is_refused_past_the_decode_limit(tmp_path):
    path = tmp_path / "wide.png"
    Image.new("RGB", (400, 300)).save(path)
    with pytest.raises(ImageError, match="too large to decode"):
        load_image(path, max_decoded_pixels=100_000)
    assert load_image(path).rgb.shape == (300, 400, 3)


def test_large_jpeg_decodes_at_reduced_scale(tmp_path):
    path = tmp_path / "big.jpg"
    Image.new("RGB", (4000, 3000), (30, 160, 90)).save(path, quality=80)
    img = load_image(path, min_long_side=900, max_decoded_pixels=2_000_000)
    assert (img.width, img.height) == (4000, 3000)
    assert img.rgb.shape == (750, 1000, 3)  # 1/4 scale keeps the longer side >= 900
    assert img.scale_x == pytest.approx(0.25) and img.scale_y == pytest.approx(0.25)
    # a portrait photo the same: the longer side counts, whichever it is
    Image.new("RGB", (3000, 4000), (30, 160, 90)).save(path, quality=80)
    assert load_image(path, min_long_side=1001).rgb.shape == (2000, 1500, 3)  # 1000 < 1001
    # a photo already small enough is decoded whole
    assert load_image(path, min_long_side=4000).rgb.shape == (4000, 3000, 3)
    # without min_long_side the same photo is too large for a 2-megapixel decode limit
    with pytest.raises(ImageError, match="too large to decode"):
        load_image(path, max_decoded_pixels=2_000_000)


def test_100_megapixel_jpeg_reads_quickly_and_small(tmp_path):
    path = tmp_path / "huge.jpg"
    Image.new("L", (10_000, 10_000), 128).save(path, quality=50)
    t0 = time.perf_counter()
    img = load_image(path, min_long_side=640)
    assert time.perf_counter() - t0 < 5
    assert (img.width, img.height) == (10_000, 10_000)
    assert img.rgb.shape == (1250, 1250, 3)


def _heic(rgb: np.ndarray, orientation: int = 1) -> bytes:
    pillow_heif = pytest.importorskip(
        "pillow_heif", reason="pillow-heif: pip install 'dicecam[heif]'"
    )
    exif = Image.Exif()
    exif[0x0112] = orientation
    out = io.BytesIO()
    pillow_heif.from_pillow(Image.fromarray(rgb)).save(out, quality=95, exif=exif.tobytes())
    return out.getvalue()


def test_heic_photo_is_read_upright(tmp_path):
    rgb = np.zeros((48, 64, 3), np.uint8)
    rgb[:12, :16] = (255, 255, 255)  # a white corner, top left as stored
    path = tmp_path / "IMG_0042.HEIC"
    path.write_bytes(_heic(rgb, orientation=6))  # shown turned a quarter to the right
    for source in (path, path.read_bytes()):
        img = load_image(source)
        assert (img.width, img.height) == (48, 64) and img.rgb.shape == (64, 48, 3)
        white = np.argwhere(img.rgb.mean(axis=2) > 128)
        assert white[:, 0].max() < 16 and white[:, 1].min() >= 48 - 12  # now top right


def test_heic_photo_without_pillow_heif_names_the_fix(tmp_path, monkeypatch):
    import sys

    import vision.io

    data = _heic(_gradient())
    monkeypatch.setattr(vision.io, "_heif_registered", False)
    monkeypatch.setitem(sys.modules, "pillow_heif", None)  # import pillow_heif now fails
    path = tmp_path / "IMG_0043.heic"
    path.write_bytes(data)
    for source in (path, data):
        with pytest.raises(ImageError, match=r"HEIC/HEIF photo .*pip install 'dicecam\[heif\]'"):
            load_image(source)


def test_a_path_of_blanks_is_quoted_so_the_message_shows_it(tmp_path: Path) -> None:
    """``load_image(" ")`` used to say "no such file: " with the name invisible; a name with
    blanks at its ends is shown quoted, in each message that names the file."""
    with pytest.raises(ImageError, match=r"^no such file: ' '$"):
        load_image(" ")
    with pytest.raises(ImageError, match=r"^no such file: '\\t'$"):
        load_image("\t")
    padded = tmp_path / "roll.jpg "
    padded.write_bytes(b"")
    with pytest.raises(ImageError, match=r"empty file: '.*roll\.jpg ' \(0 bytes\)"):
        load_image(padded)
    padded.write_bytes(b"not a photo")
    with pytest.raises(ImageError, match=r"not an image .*: '.*roll\.jpg '$"):
        load_image(padded)
    with pytest.raises(ImageError, match=r"^no such file: .*gone\.jpg$"):  # plain names as they are
        load_image(tmp_path / "gone.jpg")
