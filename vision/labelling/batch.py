"""Label a folder of photos with a reader; write and read any of the three formats."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, TextIO

from vision.atomic import atomic_write
from vision.types import Reading

from .coco import read_coco, write_coco
from .labelstudio import read_labelstudio, write_labelstudio
from .model import (
    ImageMode,
    LabelFormatError,
    LabelledPhoto,
    find_photos,
    flat_names,
    image_size,
    read_json,
)
from .progress import progress
from .review import write_review
from .yolo import read_yolo, write_yolo

__all__ = [
    "FORMATS",
    "LabelFormat",
    "LabelRun",
    "PhotoReader",
    "Unreadable",
    "detect_format",
    "label_folder",
    "label_photos",
    "read_labels",
    "write_label_run",
    "write_labels",
    "write_training_folder",
]

LabelFormat = Literal["yolo", "coco", "labelstudio"]
FORMATS: tuple[LabelFormat, ...] = ("yolo", "coco", "labelstudio")


class PhotoReader(Protocol):
    """Anything with ``read(image) -> Reading``: :class:`vision.reader.DiceReader`, or a fake.
    With a dice count (:func:`label_photos`' ``expected_dice``) it is called with
    ``expected_dice=`` too."""

    def read(self, image: Any) -> Reading: ...


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A photo the reader could not read, and why."""

    name: str
    path: Path
    reason: str


@dataclass(slots=True)
class LabelRun:
    """What :func:`label_photos` read: labelled photos in folder order, and the failures."""

    photos: list[LabelledPhoto] = field(default_factory=list)
    unreadable: list[Unreadable] = field(default_factory=list)
    seconds: float = 0.0
    outputs: dict[str, Path] = field(default_factory=dict)
    short: list[str] = field(default_factory=list)
    """Photos read with fewer dice than the count given (``expected_dice``): look at them first."""

    @property
    def dice(self) -> int:
        return sum(len(p.dice) for p in self.photos)

    @property
    def unsure(self) -> int:
        """Dice whose value the reader is unsure of (:attr:`vision.types.Die.unsure`)."""
        return sum(1 for p in self.photos for d in p.dice if d.unsure)

    def summary(self) -> dict[str, Any]:
        return {
            "photos": len(self.photos) + len(self.unreadable),
            "labelled": len(self.photos),
            "dice": self.dice,
            "unsure_dice": self.unsure,
            "short_of_count": self.short,
            "unreadable": [{"photo": u.name, "reason": u.reason} for u in self.unreadable],
            "seconds": round(self.seconds, 2),
            "outputs": {k: str(v) for k, v in self.outputs.items()},
        }


def _read_errors() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = [OSError, ValueError]
    try:
        from vision.io import ImageError  # the reader issue's loader, when present

        errors.append(ImageError)
    except ImportError:
        pass
    return tuple(errors)


def label_photos(
    root: str | os.PathLike[str],
    reader: PhotoReader,
    *,
    conf: float = 0.0,
    show_progress: bool = True,
    stream: TextIO | None = None,
    exclude: str | os.PathLike[str] | None = None,
    expected_dice: int | None = None,
) -> LabelRun:
    """Read every photo under ``root`` with ``reader``; keep dice with confidence >= ``conf``.

    ``expected_dice``: every photo shows this many dice (a player photographing their own set):
    the reader fits its dice to the count (:mod:`vision.count`), and the photos it still reads
    short are listed in ``LabelRun.short``.

    A photo the reader cannot open (it raises ``OSError``, ``ValueError`` or
    ``vision.io.ImageError``) is listed in ``LabelRun.unreadable``; the run goes on. Photos
    under ``exclude`` are left out.

    Example:
        >>> import shutil, tempfile
        >>> from vision import DiceReader
        >>> photos = Path(tempfile.mkdtemp())
        >>> _ = shutil.copy("datasets/samples/roll-s21-035.jpg", photos)
        >>> _ = (photos / "broken.jpg").write_bytes(b"not a photo")
        >>> run = label_photos(photos, DiceReader(), show_progress=False)
        >>> len(run.photos), [u.name for u in run.unreadable]
        (1, ['broken.jpg'])
        >>> shutil.rmtree(photos)
    """
    root = Path(root)
    paths = find_photos(root)
    if exclude is not None:  # e.g. an output folder inside the photos folder
        skip = Path(exclude).resolve()
        paths = [p for p in paths if not p.resolve().is_relative_to(skip)]
    errors = _read_errors()
    run = LabelRun()
    start = time.perf_counter()
    for path in progress(
        paths, total=len(paths), desc="label", stream=stream, enabled=show_progress
    ):
        name = path.relative_to(root).as_posix()
        try:
            if expected_dice is None:
                reading = reader.read(path)
            else:
                reading = reader.read(path, expected_dice=expected_dice)
        except errors as exc:
            run.unreadable.append(Unreadable(name, path, f"{type(exc).__name__}: {exc}"))
            continue
        if not reading.width or not reading.height:
            run.unreadable.append(Unreadable(name, path, "reader returned an empty image"))
            continue
        photo = LabelledPhoto.from_reading(name, reading, path)
        photo.dice = [d for d in photo.dice if d.confidence >= conf]
        run.photos.append(photo)
        if expected_dice is not None and len(photo.dice) < expected_dice:
            run.short.append(name)
    run.seconds = time.perf_counter() - start
    return run


def write_labels(
    photos: Sequence[LabelledPhoto],
    out: str | os.PathLike[str],
    fmt: LabelFormat,
    *,
    images: ImageMode | None = None,
    image_prefix: str | None = None,
    model_version: str = "dicecam",
    cocked_class: bool = False,
) -> Path:
    """Write ``photos`` in ``fmt`` into ``out``; return the main file written.

    ``images`` defaults to ``"copy"`` for YOLO and COCO and ``"none"`` for Label Studio.
    """
    if fmt == "yolo":
        return write_yolo(photos, out, images=images or "copy", cocked_class=cocked_class)
    if fmt == "coco":
        return write_coco(photos, out, images=images or "copy")
    if fmt == "labelstudio":
        extra = {} if image_prefix is None else {"image_prefix": image_prefix}
        return write_labelstudio(
            photos, out, images=images or "none", model_version=model_version, **extra
        )
    raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")


def label_folder(
    root: str | os.PathLike[str],
    reader: PhotoReader,
    out: str | os.PathLike[str],
    fmt: LabelFormat,
    *,
    conf: float = 0.0,
    show_progress: bool = True,
    stream: TextIO | None = None,
    expected_dice: int | None = None,
    **write_options: Any,
) -> LabelRun:
    """:func:`label_photos`, then :func:`write_label_run` into ``out``."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    run = label_photos(
        root,
        reader,
        conf=conf,
        show_progress=show_progress,
        stream=stream,
        exclude=out,
        expected_dice=expected_dice,
    )
    return write_label_run(run, out, fmt, **write_options)


RUN_RECORDS = ("summary.json", "review.csv", "review.json", "unreadable.txt")
"""What :func:`write_label_run` writes of the run itself, after the labels (summary last)."""


def write_label_run(
    run: LabelRun, out: str | os.PathLike[str], fmt: LabelFormat, **write_options: Any
) -> LabelRun:
    """Write ``run``'s labels (:func:`write_labels`), ``review.csv``/``review.json``,
    ``unreadable.txt`` and ``summary.json`` into ``out``; returns ``run``, its ``outputs``
    filled in. An earlier run's review list and summary in ``out`` are removed before the
    first label is written: a run stopped part way leaves none that tells of other labels."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    out = Path(out)
    for name in RUN_RECORDS:
        (out / name).unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    run.outputs["labels"] = write_labels(run.photos, out, fmt, **write_options)
    run.outputs["review"], run.outputs["review_json"] = write_review(run.photos, out)
    unreadable = out / "unreadable.txt"
    atomic_write(unreadable, "".join(f"{u.name}\t{u.reason}\n" for u in run.unreadable))
    run.outputs["unreadable"] = unreadable
    run.outputs["summary"] = out / "summary.json"
    atomic_write(run.outputs["summary"], json.dumps(run.summary(), indent=1))
    return run


def detect_format(path: str | os.PathLike[str]) -> LabelFormat:
    """Guess the format of a label file or folder.

    Raises:
        LabelFormatError: nothing recognisable.
    """
    path = Path(path)
    if path.is_dir():
        if (path / "tasks.json").is_file():
            return "labelstudio"
        if any((path / "annotations").glob("*.json")):
            return "coco"
        if (
            (path / "data.yaml").is_file()
            or (path / "labels").is_dir()
            or (path / "obj.data").is_file()
            or any(path.glob("obj_*_data"))
        ):
            return "yolo"
        raise LabelFormatError(
            f"{path}: expected tasks.json, annotations/*.json, data.yaml or labels/ inside"
        )
    if path.suffix.lower() == ".json" and path.is_file():
        data = read_json(path)
        if isinstance(data, dict) and "images" in data and "annotations" in data:
            return "coco"
        if isinstance(data, list) or (isinstance(data, dict) and "data" in data):
            return "labelstudio"
        raise LabelFormatError(f"{path}: JSON that is neither COCO nor a Label Studio export")
    if not path.exists():
        raise FileNotFoundError(f"no such file or folder: {path}")
    if path.suffix.lower() in {".csv", ".tsv"}:
        raise LabelFormatError(
            f"{path}: expected a .json file or a dataset folder, got a {path.suffix} table (Label "
            "Studio's CSV/TSV export drops which die each 'off table'/'cocked' choice belongs "
            "to): export the project as JSON instead"
        )
    raise LabelFormatError(f"{path}: expected a .json file or a dataset folder")


def read_labels(
    path: str | os.PathLike[str],
    fmt: LabelFormat | None = None,
    *,
    image_root: str | os.PathLike[str] | None = None,
) -> list[LabelledPhoto]:
    """Read labels in any of the three formats (``fmt=None``: detected) into one form.

    ``image_root`` is where the photos are when they are not beside the labels.
    """
    fmt = fmt or detect_format(path)
    if fmt == "labelstudio":
        return read_labelstudio(path, image_root=image_root)
    if fmt == "coco":
        return read_coco(path, image_root=image_root)
    if fmt == "yolo":
        if image_root is None:
            return read_yolo(path)
        root = Path(image_root)
        listed = find_photos(root)
        # the label names `dicecam label` gave them: x.jpg and x.png are x.txt and x_2.txt
        named = [LabelledPhoto(p.relative_to(root).as_posix(), 0, 0, [], p) for p in listed]
        found = {Path(n).stem: p for n, p in zip(flat_names(named), listed, strict=True)}
        found.update({p.stem: p for p in listed if p.stem not in found})  # other tools' names
        photos = read_yolo(path, sizes=_PhotoSizes(found))
        for photo in photos:
            if photo.image is None and Path(photo.name).stem in found:
                photo.image = found[Path(photo.name).stem]
                photo.name = photo.image.relative_to(root).as_posix()
        return photos
    raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {fmt!r}")


class _PhotoSizes(Mapping[str, tuple[int, int]]):
    """Photo sizes by label stem, each read when a label asks for it: a broken photo that no
    label names costs nothing, one a label names is a clear error."""

    def __init__(self, photos: dict[str, Path]) -> None:
        self.photos = photos

    def __getitem__(self, stem: str) -> tuple[int, int]:
        path = self.photos[stem]
        try:
            return image_size(path)
        except OSError as exc:
            raise LabelFormatError(
                f"{path}: its labels need the photo's size, but it is not an image that can be "
                f"read ({exc})"
            ) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self.photos)

    def __len__(self) -> int:
        return len(self.photos)


def write_training_folder(
    photos: Sequence[LabelledPhoto],
    out: str | os.PathLike[str],
    *,
    images: Literal["copy", "link"] = "link",
    cocked_class: bool = False,
) -> Path:
    """Write a YOLO training folder for ``dicecam train --data OUT``; return its data.yaml.

    Raises:
        FileNotFoundError: some photos were not found (all of them are named).
    """
    missing = [p.name for p in photos if p.image is None or not Path(p.image).is_file()]
    if missing:
        shown = ", ".join(missing[:5]) + (
            f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        )
        raise FileNotFoundError(
            f"{len(missing)} labelled photo(s) not found: {shown} (pass the folder that holds them)"
        )
    return write_yolo(photos, out, images=images, cocked_class=cocked_class, val_is_train=True)
