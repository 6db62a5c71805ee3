"""load_image at its limits: each refusal says what was expected and what came, and the limits
let through what they document."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from PIL import Image

from vision.io import ImageError, load_image


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
