"""load_image: the same photo in the forms phones and apps give it decodes to the same pixels.

Found by metamorphic testing of the reader (the same roll as a path, bytes, PIL image, numpy
array, in other formats, rotated by EXIF, scaled): each case here is one that differed.
"""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from vision.io import load_image


def _photo(w: int, h: int) -> Image.Image:
    y, x = np.mgrid[0:h, 0:w]
    rgb = np.dstack([x * 255 // w, y * 255 // h, (x // 50 + y // 50) % 2 * 200])
    return Image.fromarray(rgb.astype(np.uint8))


def _exif(orientation: int) -> Image.Exif:
    exif = Image.Exif()
    exif[0x0112] = orientation
    return exif


@pytest.mark.parametrize("orientation", [1, 6])
def test_multi_picture_jpeg_decodes_at_reduced_scale_as_a_plain_jpeg(orientation):
    """A JPEG with a second picture (MPF: an Android Ultra HDR photo's gain map, a camera's
    preview) opens as Pillow's MPO: it decodes at reduced scale like any JPEG, to the same
    pixels and geometry, EXIF orientation applied. It decoded whole, 4 times the pixels."""
    big = _photo(4000, 3000)
    stored = big.transpose(Image.Transpose.ROTATE_90) if orientation == 6 else big
    jpeg, mpo = io.BytesIO(), io.BytesIO()
    stored.save(jpeg, "JPEG", quality=90, exif=_exif(orientation))
    stored.save(
        mpo,
        "MPO",
        quality=90,
        exif=_exif(orientation),
        save_all=True,
        append_images=[stored.resize((stored.width // 4, stored.height // 4))],
    )
    assert Image.open(mpo).format == "MPO"
    plain = load_image(jpeg.getvalue(), min_long_side=1536)
    multi = load_image(mpo.getvalue(), min_long_side=1536)
    assert (multi.width, multi.height) == (plain.width, plain.height) == (4000, 3000)
    assert multi.rgb.shape == plain.rgb.shape == (1500, 2000, 3)
    np.testing.assert_array_equal(multi.rgb, plain.rgb)


def test_bgra_array_is_composited_on_white_as_the_same_file_is(tmp_path):
    """``cv2.imread(path, cv2.IMREAD_UNCHANGED)`` of a PNG with transparent pixels gives BGRA:
    read as that array it gives the pixels the file gives (transparent ones white), not the
    colour hidden under the transparency (black here)."""
    cv2 = pytest.importorskip("cv2")
    rgba = np.zeros((20, 30, 4), np.uint8)
    rgba[:10] = (200, 40, 10, 255)  # top half opaque
    rgba[10:, :15] = (0, 0, 0, 0)  # bottom left transparent, black beneath
    rgba[10:, 15:] = (90, 180, 30, 128)  # bottom right half transparent
    path = tmp_path / "cut-out.png"
    Image.fromarray(rgba, "RGBA").save(path)
    from_file = load_image(path).rgb
    assert tuple(from_file[15, 0]) == (255, 255, 255)
    for array in (
        cv2.imread(str(path), cv2.IMREAD_UNCHANGED),  # uint8 BGRA
        cv2.imread(str(path), cv2.IMREAD_UNCHANGED).astype(np.uint16) * 257,  # 16-bit BGRA
    ):
        assert array.shape == (20, 30, 4)
        np.testing.assert_array_equal(load_image(array).rgb, from_file)
    # an opaque BGRA array is its colour channels
    bgra = cv2.cvtColor(np.asarray(_photo(30, 20))[..., ::-1].copy(), cv2.COLOR_BGR2BGRA)
    np.testing.assert_array_equal(load_image(bgra).rgb, np.asarray(_photo(30, 20)))


def test_premultiplied_alpha_pil_images_read_as_their_straight_alpha_twins():
    """Pillow's premultiplied modes (``La``, ``RGBa``: what its own resampling works in) read
    as the ``LA``/``RGBA`` image they stand for; ``La`` was refused as a corrupt image."""
    rgba = np.asarray(_photo(30, 20).convert("RGBA")).copy()
    rgba[10:, :, 3] = 100
    straight = Image.fromarray(rgba, "RGBA")
    for plain, premultiplied in (
        (straight, straight.convert("RGBa")),
        (straight.convert("LA"), straight.convert("LA").convert("La")),
    ):
        assert premultiplied.mode in ("RGBa", "La")
        got, want = load_image(premultiplied).rgb, load_image(plain).rgb
        assert np.abs(got.astype(int) - want.astype(int)).max() <= 2  # premultiplying rounds
