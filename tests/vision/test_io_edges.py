"""load_image at its limits: each refusal says what was expected and what came, and the limits
let through what they document."""

from __future__ import annotations

import io
import re
import struct
import zlib

import numpy as np
import pytest
from PIL import Image

from vision.io import ImageError, load_image


def _png_header(width: int, height: int) -> bytes:
    """A PNG that declares a size but holds no pixel data."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    out = b"\x89PNG\r\n\x1a\n"
    for kind, data in ((b"IHDR", ihdr), (b"IDAT", b""), (b"IEND", b"")):
        crc = struct.pack(">I", zlib.crc32(kind + data))
        out += struct.pack(">I", len(data)) + kind + data + crc
    return out


def _refusal(source, **kw) -> str:
    with pytest.raises(ImageError) as exc:
        load_image(source, **kw)
    return str(exc.value)


def test_a_directory_is_refused_as_not_an_image_file(tmp_path):
    message = _refusal(tmp_path)
    assert message == f"expected an image file, got a directory: {tmp_path}"


def test_the_pixel_limit_lets_a_photo_of_exactly_that_size_through(tmp_path):
    path = tmp_path / "g.png"
    Image.new("RGB", (64, 48), (10, 20, 30)).save(path)  # 64 x 48 = 3072 pixels
    assert load_image(path, max_image_pixels=3072).rgb.shape == (48, 64, 3)
    assert "image too large: " in _refusal(path, max_image_pixels=3071)


def test_too_large_to_decode_is_said_as_such_not_as_a_corrupt_photo(tmp_path):
    path = tmp_path / "wide.png"
    Image.new("RGB", (400, 300)).save(path)
    message = _refusal(path, max_decoded_pixels=100_000)
    assert message.startswith(f"image too large to decode: {path} is 400x300")
    assert "corrupt" not in message
    # exactly at the decode limit: decoded
    assert load_image(path, max_decoded_pixels=120_000).rgb.shape == (300, 400, 3)


def test_something_that_is_no_image_source_is_named_by_its_type():
    message = _refusal(3.5)
    assert message == "expected a path, bytes, a PIL image or a numpy array, got builtins.float"
    assert re.search(r"got builtins\.list$", _refusal([[0, 0], [0, 0]]))


def test_a_float_array_topping_at_exactly_one_is_read_on_the_0_to_1_scale():
    gray = np.array([[0.0, 0.5, 1.0]])  # 0..1 floats: 1.0 is white, not 1/255 of it
    assert load_image(gray).rgb[0, :, 0].tolist() == [0, 128, 255]
    gray255 = np.array([[0.0, 2.0, 255.0]])  # past 1: 0..255 floats
    assert load_image(gray255).rgb[0, :, 0].tolist() == [0, 2, 255]


def test_an_integer_array_topping_at_255_is_8_bit_and_past_it_16_bit():
    eight = np.array([[0, 128, 255]], np.int64)  # 8-bit values in a wider type
    assert load_image(eight).rgb[0, :, 0].tolist() == [0, 128, 255]
    sixteen = np.array([[0, 256, 65535]], np.uint16)  # past 255: 16-bit, / 257
    assert load_image(sixteen).rgb[0, :, 0].tolist() == [0, 0, 255]


@pytest.mark.parametrize("fmt", ["PNG", "GIF"])
def test_a_palette_photos_transparent_colour_comes_out_white(fmt):
    im = Image.new("P", (4, 2), 0)
    im.putpalette([0, 0, 0, 200, 0, 0] + [0] * 762)  # index 0 black, index 1 red
    im.paste(1, (0, 0, 2, 2))  # left half red, right half index 0
    buf = io.BytesIO()
    im.save(buf, fmt, transparency=0)  # index 0 transparent: white, as a viewer shows it
    rgb = load_image(buf.getvalue()).rgb
    assert rgb[:, :2].reshape(-1, 3).tolist() == [[200, 0, 0]] * 4
    assert rgb[:, 2:].reshape(-1, 3).tolist() == [[255, 255, 255]] * 4


@pytest.mark.parametrize("size", [(0, 0), (5, 0), (0, 3)])
def test_a_pil_image_without_pixels_is_refused_with_its_size(size):
    w, h = size
    assert _refusal(Image.new("RGB", size)) == f"image has no pixels: <PIL image> ({w}x{h})"


def test_a_path_through_a_file_is_refused_as_unreadable_not_raised_raw(tmp_path):
    photo = tmp_path / "photo.jpg"
    photo.write_bytes(b"\xff\xd8")
    inside = photo / "inner.jpg"  # a path "inside" a file: stat fails with ENOTDIR
    assert _refusal(inside) == f"cannot read {inside}: Not a directory"


def test_pillows_own_pixel_limit_is_the_one_named_when_it_is_the_lower(monkeypatch):
    # Pillow refuses past twice its MAX_IMAGE_PIXELS before dicecam sees the size: with a
    # higher limit of dicecam's own, the message names Pillow's (2 x 1M = 2 megapixels)
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1_000_000)
    message = _refusal(_png_header(2000, 1500), max_image_pixels=500_000_000)
    assert message == "image too large: <bytes> is 3 megapixels (limit 2); downscale it first"


def test_a_bgra_array_only_partly_transparent_is_composited_as_its_file_is(tmp_path):
    rgba = np.zeros((4, 6, 4), np.uint8)
    rgba[:, :3] = (200, 40, 10, 255)
    rgba[:, 3:] = (0, 0, 200, 200)  # blue at alpha 200: blended with white, nowhere clear
    path = tmp_path / "tinted.png"
    Image.fromarray(rgba, "RGBA").save(path)
    from_file = load_image(path).rgb
    # each channel c * a + 255 * (1 - a), a = 200 / 255: 0 -> 55, 200 -> 212
    assert from_file[0, 5].tolist() == [55, 55, 212]
    bgra = rgba[..., [2, 1, 0, 3]].copy()
    np.testing.assert_array_equal(load_image(bgra).rgb, from_file)


def test_an_empty_path_is_refused_as_empty_not_as_the_current_directory():
    # Path("") is "."; the message said "got a directory: ." of a path no one gave
    assert _refusal("") == "expected a path to an image file, got an empty path"


def test_a_palette_image_with_an_alpha_band_comes_out_white_where_transparent():
    # a PIL "PA" image: palette index and alpha per pixel; left half red opaque, right half
    # index 0 (black) fully transparent
    bands = np.zeros((2, 4, 2), np.uint8)
    bands[:, :2] = (1, 255)
    pa = Image.frombytes("PA", (4, 2), bands.tobytes())
    pa.putpalette([0, 0, 0, 200, 0, 0] + [0] * 762)
    rgb = load_image(pa).rgb
    assert rgb[:, :2].reshape(-1, 3).tolist() == [[200, 0, 0]] * 4
    assert rgb[:, 2:].reshape(-1, 3).tolist() == [[255, 255, 255]] * 4
