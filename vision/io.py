"""Image loading: a path, bytes, a PIL image or a numpy BGR array in, RGB pixels out.

EXIF orientation is applied, so every pixel coordinate dicecam reports is in the image as a
viewer shows it. Grayscale, palette, alpha and 16-bit images are converted; anything that is not
a readable image raises :class:`ImageError` with a message naming what was expected.

Huge photos are guarded: a header that declares more than ``max_image_pixels`` is refused before
decoding, and JPEGs are decoded at a reduced scale (libjpeg DCT scaling, ``Image.draft``) when the
caller only needs ``min_long_side`` pixels along the longer side, so a 12-megapixel phone photo
decodes in a third of the time and a 100-megapixel one in a fraction of the time and memory.

HEIC/HEIF photos (an iPhone's default) are read through pillow-heif when it is installed
(``pip install 'dicecam[heif]'``); without it they raise an :class:`ImageError` that says so.

Example:
    >>> img = load_image(b"not an image")
    Traceback (most recent call last):
    ...
    vision.io.ImageError: not an image (expected JPEG, PNG, WebP, AVIF, HEIC, BMP, TIFF or GIF data): <bytes>
"""

from __future__ import annotations

import io
import math
import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = [
    "IMAGE_SUFFIXES",
    "TRAINING_SUFFIXES",
    "ImageError",
    "ImageSource",
    "LoadedImage",
    "load_image",
    "register_heif",
]

ImageSource = str | os.PathLike | bytes | bytearray | memoryview | Image.Image | np.ndarray
"""What :func:`load_image` and :meth:`vision.DiceReader.read` accept."""

IMAGE_SUFFIXES = frozenset(
    {".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff", ".gif", ".avif", ".heic", ".heif"}
)
"""File suffixes (lower case) that dicecam takes for photos when it lists a folder."""
TRAINING_SUFFIXES = frozenset({".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff"})
"""The photo formats that OpenCV, ultralytics and labelling tools read too: ``dicecam train
--data`` takes these only, and ``dicecam label`` writes other photos it copies as JPEG."""

DEFAULT_MAX_IMAGE_PIXELS = 120_000_000
DEFAULT_MAX_DECODED_PIXELS = 40_000_000
_JPEG_FORMATS = {"JPEG", "MPO"}
"""Formats decoded at reduced scale: Pillow opens a JPEG holding more pictures (MPF: an Android
Ultra HDR photo's gain map, a camera's preview) as MPO, its first picture a plain JPEG."""
_SWAPS_AXES = {5, 6, 7, 8}  # EXIF orientations that rotate by 90 degrees
_DECODE_ERRORS = (SyntaxError, ValueError, EOFError, RuntimeError)
"""What Pillow's decoders raise on corrupt data besides OSError: a PNG's truncated IHDR or tRNS
chunk (ValueError), libavif's 'Decoding of color planes failed' (RuntimeError), ..."""
_ORIENTATION_TAG = 0x0112
# ISO base media "ftyp" brands of HEIF photos (an iPhone's HEIC among them); AVIF, the same
# container, Pillow reads on its own
_HEIF_BRANDS = {b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"mif1", b"msf1"}
_heif_registered = False
_OPENED_FORMATS = ("JPEG", "PNG", "WEBP", "AVIF", "HEIF", "BMP", "TIFF", "GIF")
"""The Pillow formats a photo is opened as (a JPEG with more pictures opens as MPO through JPEG's
opener; HEIF once pillow-heif is registered). Pillow's others stay closed: an EPS is rendered by
running Ghostscript on it (a PostScript loop never ends), and none of them is a phone's photo."""


class ImageError(ValueError):
    """The input is not an image dicecam can read (missing, empty, corrupt, too large, ...)."""


@dataclass(slots=True)
class LoadedImage:
    """Decoded pixels plus the geometry needed to map them back to the original image.

    ``rgb`` is an ``H x W x 3`` uint8 array. ``width`` and ``height`` are the size of the image as a
    viewer shows it (after EXIF orientation); ``rgb`` is smaller than that when a JPEG was decoded
    at a reduced scale: ``scale_x = rgb.shape[1] / width`` (and ``scale_y``) map decoded pixels
    back, ``x_original = x_decoded / scale_x``.
    """

    rgb: NDArray[np.uint8]
    width: int
    height: int
    name: str | None = None

    @property
    def scale_x(self) -> float:
        return self.rgb.shape[1] / self.width

    @property
    def scale_y(self) -> float:
        return self.rgb.shape[0] / self.height

    @property
    def bgr(self) -> NDArray[np.uint8]:
        """The pixels in OpenCV's channel order (a copy)."""
        return np.ascontiguousarray(self.rgb[..., ::-1])


def _shown(path: Path) -> str:
    """The path as a message shows it: quoted when blanks at its ends would hide them (``' '``)."""
    text = str(path)
    return repr(text) if text != text.strip() else text


def load_image(
    source: ImageSource,
    *,
    min_long_side: int | None = None,
    max_image_pixels: int = DEFAULT_MAX_IMAGE_PIXELS,
    max_decoded_pixels: int = DEFAULT_MAX_DECODED_PIXELS,
) -> LoadedImage:
    """Decode ``source`` into RGB pixels, EXIF orientation applied.

    ``source`` is a file path, encoded bytes, a PIL image or a numpy array in OpenCV layout (BGR,
    BGRA or single channel; uint8, uint16 or float in 0..1). Transparent pixels, of a file, a PIL
    image or a BGRA array alike, come out white. With ``min_long_side``, a JPEG
    may be decoded at 1/2, 1/4 or 1/8 scale as long as its longer side stays at least
    ``min_long_side`` pixels (``LoadedImage.scale_x`` and ``scale_y`` then say by how much).

    Raises:
        ImageError: missing or empty file, not an image, truncated or corrupt data, an image
            larger than ``max_image_pixels``, or an array of the wrong shape or type.
    """
    if isinstance(source, np.ndarray):
        return LoadedImage(_array_to_rgb(source), source.shape[1], source.shape[0])
    if isinstance(source, Image.Image):
        return _from_pil(source, None, None, max_image_pixels, max_decoded_pixels)
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        if not data:
            raise ImageError("empty image data: <bytes> (0 bytes)")
        return _open(
            io.BytesIO(data), "<bytes>", None, min_long_side, max_image_pixels, max_decoded_pixels
        )
    if isinstance(source, (str, os.PathLike)):
        if not os.fspath(source):  # Path("") is ".", the folder dicecam runs in
            raise ImageError("expected a path to an image file, got an empty path")
        path = Path(source)
        name = _shown(path)
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            raise ImageError(f"no such file: {name}") from None
        except OSError as exc:
            raise ImageError(f"cannot read {name}: {exc.strerror or exc}") from None
        if path.is_dir():
            raise ImageError(f"expected an image file, got a directory: {name}")
        if size == 0:
            raise ImageError(f"empty file: {name} (0 bytes)")
        return _open(path, name, str(path), min_long_side, max_image_pixels, max_decoded_pixels)
    raise ImageError(
        "expected a path, bytes, a PIL image or a numpy array, "
        f"got {type(source).__module__}.{type(source).__qualname__}"
    )


def register_heif() -> bool:
    """Register pillow-heif's opener with Pillow (once), so that ``Image.open`` reads HEIC/HEIF
    photos; False when pillow-heif is not installed. :func:`load_image` calls it by itself at the
    first HEIF photo, so the photos of other phones never pay for the import."""
    global _heif_registered
    if not _heif_registered:
        try:
            import pillow_heif
        except ImportError:
            return False
        pillow_heif.register_heif_opener()
        _heif_registered = True
    return True


def _heif_unreadable(fp: Any) -> bool:
    """Whether ``fp`` (a path or a seekable stream, its position kept) holds a HEIF photo that
    Pillow cannot open, pillow-heif not being installed."""
    try:
        if isinstance(fp, (str, os.PathLike)):
            with open(fp, "rb") as f:
                head = f.read(12)
        else:
            pos = fp.tell()
            head = fp.read(12)
            fp.seek(pos)
    except OSError:
        return False  # Image.open reports it
    return head[4:8] == b"ftyp" and head[8:12] in _HEIF_BRANDS and not register_heif()


def _formats() -> list[str]:
    """Those of :data:`_OPENED_FORMATS` that Pillow has an opener for now."""
    Image.init()  # registers every plugin, once
    return [f for f in _OPENED_FORMATS if f in Image.OPEN]


def _open(
    fp: Any,
    label: str,
    name: str | None,
    min_long_side: int | None,
    max_image_pixels: int,
    max_decoded_pixels: int,
) -> LoadedImage:
    if _heif_unreadable(fp):
        raise ImageError(
            f"a HEIC/HEIF photo (an iPhone's format), and pillow-heif is not installed: {label}; "
            "install it (pip install 'dicecam[heif]') or export the photo as JPEG"
        )
    try:
        with warnings.catch_warnings():
            # dicecam applies its own pixel limit below, with a clearer message.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            im = Image.open(fp, formats=_formats())
    except Image.DecompressionBombError as exc:
        # Pillow refuses past twice its own limit before dicecam sees the size: say it as ours
        found = re.search(r"\((\d+) pixels\)", str(exc))
        size = f" is {int(found.group(1)) / 1e6:.0f} megapixels" if found else ""
        limit = min(max_image_pixels, 2 * (Image.MAX_IMAGE_PIXELS or max_image_pixels))
        raise ImageError(
            f"image too large: {label}{size} (limit {limit / 1e6:.0f}); downscale it first"
        ) from None
    except UnidentifiedImageError:
        raise ImageError(
            f"not an image (expected JPEG, PNG, WebP, AVIF, HEIC, BMP, TIFF or GIF data): {label}"
        ) from None
    except OSError as exc:
        raise ImageError(f"cannot read {label}: {exc}") from None
    except _DECODE_ERRORS as exc:  # a header Pillow's parser or libavif gives up on
        raise _corrupt(label, exc) from None
    with im:
        return _from_pil(im, name, min_long_side, max_image_pixels, max_decoded_pixels, label)


def _from_pil(
    im: Image.Image,
    name: str | None,
    min_long_side: int | None,
    max_image_pixels: int,
    max_decoded_pixels: int,
    label: str = "<PIL image>",
) -> LoadedImage:
    w, h = im.size
    if w < 1 or h < 1:
        raise ImageError(f"image has no pixels: {label} ({w}x{h})")
    if w * h > max_image_pixels:
        raise ImageError(
            f"image too large: {label} is {w}x{h} = {w * h / 1e6:.0f} megapixels "
            f"(limit {max_image_pixels / 1e6:.0f}); downscale it first"
        )
    try:
        orientation = int(im.getexif().get(_ORIENTATION_TAG, 1))
    except Exception:  # a broken EXIF block must not stop the reading
        orientation = 1
    try:
        if min_long_side and im.format in _JPEG_FORMATS and max(w, h) > min_long_side:
            # draft() keeps both sides at least the size asked for: ask for the photo's own
            # aspect, its longer side at min_long_side
            f = min_long_side / max(w, h)
            im.draft(im.mode, (max(1, math.ceil(w * f)), max(1, math.ceil(h * f))))
        dw, dh = im.size
        if dw * dh > max_decoded_pixels:
            raise ImageError(
                f"image too large to decode: {label} is {w}x{h} "
                f"({w * h / 1e6:.0f} megapixels, limit {max_decoded_pixels / 1e6:.0f} for "
                f"{im.format or 'this'} images); downscale it or save it as JPEG"
            )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            im.load()
            if orientation != 1:
                im = ImageOps.exif_transpose(im)
            rgb = _pil_to_rgb(im)
    except ImageError:
        raise
    except (OSError, Image.DecompressionBombError, *_DECODE_ERRORS) as exc:
        raise _corrupt(label, exc) from None
    # Pillow turns a TIFF itself (its size is the upright one from the start): the decoded
    # pixels, not the tag, say whether the axes were swapped
    turned = (dw, dh) == rgb.shape[:2] if dw != dh else orientation in _SWAPS_AXES
    view_w, view_h = (h, w) if turned else (w, h)
    return LoadedImage(rgb, view_w, view_h, name)


def _corrupt(label: str, exc: BaseException) -> ImageError:
    reason = str(exc) or type(exc).__name__
    return ImageError(f"truncated or corrupt image: {label} ({reason})")


def _pil_to_rgb(im: Image.Image) -> NDArray[np.uint8]:
    mode = im.mode
    if mode == "RGB":
        return np.asarray(im, dtype=np.uint8)
    if mode in ("I;16", "I;16B", "I;16L", "I;16N", "I", "F"):
        return _array_to_rgb(np.asarray(im))
    if mode == "P" and "transparency" in im.info:
        im = im.convert("RGBA")
        mode = "RGBA"
    if mode == "La":  # premultiplied: Pillow converts it to LA only
        im = im.convert("LA")
        mode = "LA"
    if mode in ("RGBA", "LA", "PA", "RGBa"):
        return _on_white(im.convert("RGBA"))
    return np.asarray(im.convert("RGB"), dtype=np.uint8)


def _on_white(rgba: Image.Image) -> NDArray[np.uint8]:
    """An RGBA image composited on white: its transparent pixels white, as a viewer shows them."""
    white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
    return np.asarray(Image.alpha_composite(white, rgba).convert("RGB"), dtype=np.uint8)


def _to_uint8(a: np.ndarray) -> NDArray[np.uint8]:
    if a.dtype == np.uint8:
        return a
    if a.dtype == np.bool_:
        return a.astype(np.uint8) * 255
    if a.dtype.kind == "f":
        if not np.isfinite(a).all():
            raise ImageError("image array contains NaN or infinite values")
        top = 1.0 if a.size == 0 or float(a.max()) <= 1.0 else 255.0
        return np.clip(a * (255.0 / top), 0, 255).round().astype(np.uint8)
    if a.dtype.kind in "iu":
        top = int(a.max()) if a.size else 0
        if top > 255:  # 16-bit data (uint16 arrays, PIL "I;16"/"I" modes)
            return np.clip(a // 257, 0, 255).astype(np.uint8)
        return np.clip(a, 0, 255).astype(np.uint8)
    raise ImageError(f"expected an image array of integers or floats, got dtype {a.dtype}")


def _array_to_rgb(a: np.ndarray) -> NDArray[np.uint8]:
    """Numpy in OpenCV layout (BGR, BGRA, gray) to contiguous RGB uint8; BGRA composited on
    white, as a file with the same pixels is."""
    import cv2

    if a.ndim == 3 and a.shape[2] == 1:
        a = a[:, :, 0]
    if a.ndim not in (2, 3) or (a.ndim == 3 and a.shape[2] not in (3, 4)):
        raise ImageError(
            f"expected an image array of shape HxW, HxWx3 (BGR) or HxWx4 (BGRA), got {a.shape}"
        )
    if a.shape[0] < 1 or a.shape[1] < 1:
        raise ImageError(f"image array has no pixels: shape {a.shape}")
    a = np.ascontiguousarray(_to_uint8(a))
    if a.ndim == 2:
        return cv2.cvtColor(a, cv2.COLOR_GRAY2RGB)
    if a.shape[2] == 4:  # on white where transparent, as the file it was read from gives it
        if int(a[..., 3].min()) < 255:
            return _on_white(Image.fromarray(cv2.cvtColor(a, cv2.COLOR_BGRA2RGBA), "RGBA"))
        return cv2.cvtColor(a, cv2.COLOR_BGRA2RGB)
    return cv2.cvtColor(a, cv2.COLOR_BGR2RGB)
