"""The in-memory form every labelling format reads into and writes from."""

from __future__ import annotations

import json
import math
import os
import shutil
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from vision.atomic import link_name, replace_file, replacing
from vision.io import IMAGE_SUFFIXES, TRAINING_SUFFIXES, load_image, register_heif
from vision.types import Die, Reading

__all__ = [
    "IMAGE_EXTENSIONS",
    "ImageMode",
    "LabelFormatError",
    "LabelledPhoto",
    "find_photos",
    "flat_names",
    "image_size",
    "label_confidence",
]

IMAGE_EXTENSIONS = IMAGE_SUFFIXES
"""Suffixes (lower case) :func:`find_photos` treats as photos: :data:`vision.io.IMAGE_SUFFIXES`."""

ImageMode = Literal["copy", "link", "none"]
"""How a writer places the photos beside the labels: copy them, link them, or leave them."""

COCKED_NAME = "cocked"
VALUE_NAMES = ("1", "2", "3", "4", "5", "6")


def label_confidence(die: Die) -> float:
    """How sure the reader is of a die's label, box and value: the lower of the detector's
    confidence and the face classifier's probability of the value (when it read the value).

    Example:
        >>> label_confidence(Die(5, (0, 0, 9, 9), 0.9, face_confidence=0.45))
        0.45
    """
    face = die.face_confidence
    return float(die.confidence if face is None else min(die.confidence, face))


class LabelFormatError(ValueError):
    """A label file does not say what its format promises; the message names file and entry."""


def read_text(path: str | os.PathLike[str]) -> str:
    """A label file's text as UTF-8, whatever the locale's encoding (cp1252 on a Windows
    laptop), less the byte order mark Notepad and PowerShell put first; CRLF line ends read as
    ``\\n``. Bytes that are not UTF-8 raise UnicodeDecodeError."""
    return Path(path).read_text(encoding="utf-8-sig")


def read_json(path: str | os.PathLike[str]) -> Any:
    """A JSON label file (see :func:`read_text`), or :class:`LabelFormatError` naming it."""
    try:
        return json.loads(read_text(path))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise LabelFormatError(f"{path}: not JSON ({exc})") from exc


@contextmanager
def entry(where: str) -> Iterator[None]:
    """Read one entry of a label file: a missing key, a list where a number belongs and the like
    become a :class:`LabelFormatError` that names the entry (``where``).

    Example:
        >>> with entry("tasks.json: task 3"):  # doctest: +IGNORE_EXCEPTION_DETAIL
        ...     {}["data"]
        Traceback (most recent call last):
        LabelFormatError: tasks.json: task 3: unexpected content (missing key 'data')
    """
    try:
        yield
    except LabelFormatError:
        raise
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
        detail = f"missing key {exc}" if isinstance(exc, KeyError) else str(exc)
        raise LabelFormatError(f"{where}: unexpected content ({detail})") from exc


def number(value: Any, what: str, where: str) -> float:
    """``value`` as a finite float, or a :class:`LabelFormatError` naming ``what`` it was."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        x = math.nan
    if not math.isfinite(x) or isinstance(value, bool):
        raise LabelFormatError(f"{where}: expected a number for {what}, got {value!r}")
    return x


def size(value: Any, what: str, where: str) -> int:
    """``value`` as a positive whole number of pixels (a photo's width or height)."""
    x = number(value, what, where)
    if x < 1 or x != int(x):
        raise LabelFormatError(
            f"{where}: expected a whole number of pixels for {what}, got {value!r}"
        )
    return int(x)


def check_box(box: Sequence[float], where: str) -> tuple[float, float, float, float]:
    """``box`` (x1, y1, x2, y2) when its corners are finite and it has some width and height."""
    x1, y1, x2, y2 = (float(v) for v in box)
    if not all(map(math.isfinite, (x1, y1, x2, y2))) or x2 <= x1 or y2 <= y1:
        raise LabelFormatError(
            f"{where}: expected a box of positive width and height, got "
            f"({x1:g}, {y1:g}, {x2:g}, {y2:g})"
        )
    return x1, y1, x2, y2


@dataclass(slots=True)
class LabelledPhoto:
    """One photo and its dice, as a labelling tool sees it.

    ``name`` is the photo's path relative to the labelled folder (``"table/IMG_1.jpg"``); it is
    what the formats write and what ties a corrected label back to its photo. ``image`` is where
    the file lies now (None when an import could not find it). Boxes are pixels of the image after
    EXIF orientation, as in :class:`vision.types.Die`.

    Example:
        >>> p = LabelledPhoto("a.jpg", 640, 480, [Die(5, (10, 10, 40, 40), 0.9)])
        >>> p.dice[0].value
        5
    """

    name: str
    width: int
    height: int
    dice: list[Die] = field(default_factory=list)
    image: Path | None = None

    @classmethod
    def from_reading(cls, name: str, reading: Reading, image: Path | None = None) -> LabelledPhoto:
        return cls(name, int(reading.width), int(reading.height), list(reading.dice), image)

    @property
    def flat_name(self) -> str:
        """``name`` with folders joined by ``__``: unique inside one flat images folder."""
        return self.name.replace("\\", "/").strip("/").replace("/", "__")


def flat_names(photos: Sequence[LabelledPhoto], *, portable: bool = False) -> list[str]:
    """Each photo's :attr:`~LabelledPhoto.flat_name`, made unique by file stem.

    Label files are named by stem, so ``x.jpg`` and ``x.png`` (or a repeated name) would share
    one; the later ones get ``_2``, ``_3``... before the extension. With ``portable``, a photo in
    a format other tools may not read (HEIC, AVIF, GIF: not in
    :data:`vision.io.TRAINING_SUFFIXES`) is named ``.jpg``, the copy :func:`place_image` writes.
    """
    names, used = [], set()
    for photo in photos:
        flat = photo.flat_name
        stem, suffix = Path(flat).stem, Path(flat).suffix
        if portable and suffix.lower() not in TRAINING_SUFFIXES:
            suffix = ".jpg"
        n = 1
        while stem.lower() in used:
            n += 1
            stem = f"{Path(flat).stem}_{n}"
        used.add(stem.lower())
        names.append(stem + suffix)
    return names


def find_photos(root: str | os.PathLike[str]) -> list[Path]:
    """Every photo under ``root`` (recursively, by extension, hidden entries skipped), sorted.

    Raises:
        FileNotFoundError: ``root`` is not a folder.
    """
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"expected a folder of photos, got {str(root)!r} (not a folder)")
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for fname in filenames:
            if not fname.startswith(".") and Path(fname).suffix.lower() in IMAGE_EXTENSIONS:
                found.append(Path(dirpath) / fname)
    return sorted(found)


_SWAPPED_ORIENTATIONS = {5, 6, 7, 8}


def image_size(path: str | os.PathLike[str]) -> tuple[int, int]:
    """Width and height of a photo after EXIF orientation, read from its header only.

    Raises:
        OSError: the file is missing or not an image Pillow can open.
    """
    from PIL import Image

    if Path(path).suffix.lower() in {".heic", ".heif"}:
        register_heif()  # without pillow-heif, Image.open raises an OSError (as documented)
    with Image.open(path) as im:
        width, height = im.size
        try:
            orientation = im.getexif().get(0x0112, 1)
        except Exception:  # noqa: BLE001 - a broken EXIF block just means no rotation
            orientation = 1
    if orientation in _SWAPPED_ORIENTATIONS:
        width, height = height, width
    return int(width), int(height)


def place_image(src: Path, dst: Path, mode: ImageMode) -> None:
    """Put ``src`` at ``dst``: a copy, a hard link (a symlink across file systems), or nothing.

    A ``dst`` of another format than ``src`` (a HEIC photo named ``.jpg`` by
    :func:`flat_names`) gets the photo converted, upright (EXIF orientation applied, as the
    labels' boxes are), whether copied or linked.
    """
    if mode == "none":
        return
    dst.parent.mkdir(parents=True, exist_ok=True)
    if (dst.exists() or dst.is_symlink()) and dst.resolve() == src.resolve():
        return
    # an earlier ``dst`` is replaced in one step, never removed first: a run killed here leaves
    # it for the earlier labels that name it
    if dst.suffix.lower() != src.suffix.lower():
        from PIL import Image

        kind = Image.registered_extensions().get(dst.suffix.lower())
        with replacing(dst, sync=False) as part:  # a killed run leaves no half photo
            Image.fromarray(load_image(src).rgb).save(part, format=kind, quality=95)
        return
    if mode == "copy":
        with replacing(dst, sync=False) as part:
            shutil.copy2(src, part)
        return
    part = link_name(dst)  # not ``replacing``: its chmod would reach the photo through the link
    try:
        try:
            os.link(src, part)
        except OSError:
            part.symlink_to(src.resolve())
        replace_file(part, dst)
    except BaseException:
        part.unlink(missing_ok=True)
        raise


def place_photo(photo: LabelledPhoto, dst: Path, mode: ImageMode) -> None:
    """Put the image of ``photo`` at ``dst`` (:func:`place_image`).

    Raises:
        FileNotFoundError: the photo has no image, or its file is not there.
    """
    if photo.image is None:
        raise FileNotFoundError(
            f"photo {photo.name!r}: expected its image beside the labels or under "
            "--images-from, found none (or pass --images none to write the labels only)"
        )
    if not Path(photo.image).is_file():
        raise FileNotFoundError(f"photo {photo.name!r} not found at {photo.image}")
    place_image(Path(photo.image), dst, mode)


def iter_dice(photos: Iterable[LabelledPhoto]) -> Iterator[tuple[LabelledPhoto, int, Die]]:
    for photo in photos:
        for i, die in enumerate(photo.dice):
            yield photo, i, die


def name_of_die(die: Die, where: str) -> str:
    """The class name of ``die`` (the inverse of :func:`value_of_name`): ``"1".."6"``, or
    ``"cocked"`` for a cocked die read without a top face (value 0).

    Raises:
        ValueError: any other value (``where`` says which photo and format).
    """
    if 1 <= die.value <= 6:
        return VALUE_NAMES[die.value - 1]
    if die.value == 0 and die.cocked:
        return COCKED_NAME
    raise ValueError(f"{where}: die value must be 1..6, got {die.value}")


def value_of_name(name: str, where: str) -> tuple[int, bool]:
    """Map a class name to (value, cocked): ``"1".."6"`` or ``"cocked"`` (value 0: no face)."""
    name = str(name).strip()
    if name in VALUE_NAMES:
        return int(name), False
    if name.lower() == COCKED_NAME:
        return 0, True
    raise LabelFormatError(f"{where}: expected a class named '1'..'6' or 'cocked', got {name!r}")
