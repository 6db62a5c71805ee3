"""COCO object detection files, laid out as CVAT's "COCO 1.0" export.

Layout written by :func:`write_coco`::

    OUT/annotations/instances_default.json
    OUT/images/<photo>        (copied or linked; names flattened as in the YOLO writer)

Categories 1..6 are named ``"1"``..``"6"``. Each annotation carries ``bbox`` [x, y, w, h] in
pixels, ``area``, ``iscrowd`` 0, ``score`` (the reader's confidence in the label, box and value:
:func:`~vision.labelling.model.label_confidence`) and, as CVAT writes them, ``attributes``
``{"occluded": false, "on_table": ..., "cocked": ...}``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vision.atomic import atomic_write
from vision.types import Die

from .checks import Once, on_photo
from .locate import PhotoFinder
from .model import (
    COCKED_NAME,
    VALUE_NAMES,
    ImageMode,
    LabelFormatError,
    LabelledPhoto,
    check_box,
    entry,
    flat_names,
    image_size,
    label_confidence,
    name_of_die,
    number,
    place_photo,
    read_json,
    size,
    value_of_name,
)

__all__ = ["coco_dict", "read_coco", "write_coco"]

ANNOTATIONS = Path("annotations") / "instances_default.json"
CATEGORIES = (*VALUE_NAMES, COCKED_NAME)
"""Category names by id - 1: the faces, then 7 for a cocked die read without a top face."""


def coco_dict(photos: Sequence[LabelledPhoto], *, file_names: Sequence[str] | None = None) -> dict:
    """The COCO detection dictionary for ``photos`` (``file_names`` default to their flat names)."""
    names = list(file_names) if file_names is not None else flat_names(photos)
    images, annotations = [], []
    for image_id, (photo, file_name) in enumerate(zip(photos, names, strict=True), 1):
        images.append(
            {"id": image_id, "file_name": file_name, "width": photo.width, "height": photo.height}
        )
        for die in photo.dice:
            category = CATEGORIES.index(name_of_die(die, f"{photo.name} (COCO)")) + 1
            x1, y1, x2, y2 = (float(v) for v in die.box)
            w, h = x2 - x1, y2 - y1
            annotations.append(
                {
                    "id": len(annotations) + 1,
                    "image_id": image_id,
                    "category_id": category,
                    "bbox": [round(x1, 3), round(y1, 3), round(w, 3), round(h, 3)],
                    "area": round(w * h, 3),
                    "segmentation": [],
                    "iscrowd": 0,
                    "score": round(label_confidence(die), 4),
                    "attributes": {
                        "occluded": False,
                        "on_table": bool(die.on_table),
                        "cocked": bool(die.cocked),
                    },
                }
            )
    return {
        "info": {"description": "dice labelled by dicecam", "version": "1.0"},
        "licenses": [],
        "categories": [
            {"id": i, "name": n, "supercategory": "die"} for i, n in enumerate(CATEGORIES, 1)
        ],
        "images": images,
        "annotations": annotations,
    }


def write_coco(
    photos: Sequence[LabelledPhoto], out: str | os.PathLike[str], *, images: ImageMode = "copy"
) -> Path:
    """Write ``photos`` as a COCO dataset in ``out``; return the annotations file.

    With ``images="none"``, ``file_name`` is each photo's ``name`` (relative to the labelled
    folder) instead of a flat name inside ``OUT/images``.
    """
    out = Path(out)
    none = images == "none"
    file_names = [p.name for p in photos] if none else flat_names(photos, portable=True)
    # every die checked before any photo is placed: a bad value left a half-written folder
    text = json.dumps(coco_dict(photos, file_names=file_names), indent=1)
    if not none:
        for photo, fname in zip(photos, file_names, strict=True):
            place_photo(photo, out / "images" / fname, images)
    path = out / ANNOTATIONS
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text)
    return path


_WORDS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


def _attr_bool(attrs: dict[str, Any], key: str, default: bool, where: str) -> bool:
    """A yes/no attribute (absent: ``default``): true/false, 1/0, or those and yes/no as words.

    Raises:
        LabelFormatError: anything else (``"maybe"``, 2, a list, null), naming ``where``.
    """
    if not isinstance(attrs, dict):
        raise LabelFormatError(
            f"{where}: expected 'attributes' to be an object, got {type(attrs).__name__}"
        )
    value = attrs.get(key, default)
    if isinstance(value, str) and value.strip().lower() in _WORDS:
        return _WORDS[value.strip().lower()]
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    raise LabelFormatError(
        f"{where}: expected attribute {key!r} to be true or false (or 1/0, 'yes'/'no'), "
        f"got {value!r}"
    )


def _list(data: dict[str, Any], key: str, path: Path) -> list[Any]:
    """``data[key]`` when it is a list (absent: empty)."""
    value = data.get(key, [])
    if not isinstance(value, list):
        raise LabelFormatError(f"{path}: expected '{key}' to be a list, got {type(value).__name__}")
    return value


def read_coco(
    path: str | os.PathLike[str], *, image_root: str | os.PathLike[str] | None = None
) -> list[LabelledPhoto]:
    """Read a COCO detection file (or a folder holding ``annotations/*.json``).

    Categories are matched by name (``"1"``..``"6"``, ``"cocked"``), so a Roboflow export with
    an unused super-category reads too. Photos are looked up under ``image_root`` (default: the
    ``images/`` folder beside ``annotations/``, its ``<subset>/`` folder for
    ``instances_<subset>.json`` as CVAT and datumaro export it, then the file's own folder), as
    :class:`~vision.labelling.locate.PhotoFinder` finds them: Label Studio's COCO export names
    them by URL, upload path or a path relative to where it was made, its hash prefixes added.

    Raises:
        LabelFormatError: not COCO detection JSON, an annotation with an unknown category or
            an ``on_table``/``cocked`` attribute that is not true or false (1/0, yes/no), two
            photos that fit one file_name, or (``image_root`` given) photos not found there.
    """
    path = Path(path)
    if path.is_dir():
        found = sorted((path / "annotations").glob("*.json")) or sorted(path.glob("*.json"))
        if not found:
            raise FileNotFoundError(f"no COCO .json file in {path} or {path / 'annotations'}")
        path = found[0]
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("images"), list):
        raise LabelFormatError(f"{path}: expected COCO JSON with 'images' and 'annotations' lists")
    categories: dict[Any, str] = {}
    for n, c in enumerate(_list(data, "categories", path), 1):
        with entry(f"{path}: category {n}"):
            if categories.setdefault(c["id"], str(c["name"])) != str(c["name"]):
                raise LabelFormatError(
                    f"{path}: category {n}: expected each category id once, got id {c['id']!r} "
                    f"named {str(c['name'])!r} and {categories[c['id']]!r}"
                )
    # CVAT and datumaro export annotations/instances_<subset>.json beside images/<subset>/
    subset = path.stem.removeprefix("instances_")
    images = path.parent.parent / "images"
    finder = PhotoFinder(
        [Path(image_root)]
        if image_root is not None
        else [images, images / subset, path.parent / "images", path.parent],
        subfolders=image_root is not None,
    )
    photos: dict[Any, LabelledPhoto] = {}
    missing: list[tuple[str, str]] = []
    ids, files = Once("image id"), Once("photo")
    for n, im in enumerate(data["images"], 1):
        where = f"{path}: image {n}"
        with entry(where):
            ids.add(im["id"], f"id {im['id']!r}", where, f"image {n}")
            file_name = str(im["file_name"])
            image = finder.find(file_name, where)
            width, height = im.get("width"), im.get("height")
            if not (width and height):
                if image is None:
                    raise LabelFormatError(
                        f"{where}: file_name {file_name!r} has no size and is not found "
                        f"({finder.looked_for(file_name)})"
                    )
                width, height = image_size(image)
            name = finder.name(file_name, image)
            files.add(image.resolve() if image else name, repr(file_name), where, f"image {n}")
            photos[im["id"]] = LabelledPhoto(
                name, size(width, "width", where), size(height, "height", where), [], image
            )
            if image is None:
                missing.append((f"image {n} file_name", file_name))
    for n, ann in enumerate(_list(data, "annotations", path), 1):
        where = f"{path}: annotation {ann.get('id', n) if isinstance(ann, dict) else n}"
        with entry(where):
            if ann["image_id"] not in photos:
                raise LabelFormatError(f"{where}: image_id {ann['image_id']} is not in 'images'")
            if ann.get("category_id") not in categories:
                raise LabelFormatError(
                    f"{where}: category_id {ann.get('category_id')} is not listed"
                )
            value, cocked = value_of_name(categories[ann["category_id"]], where)
            attrs = ann.get("attributes") or {}
            if len(ann["bbox"]) != 4:
                raise LabelFormatError(f"{where}: expected bbox [x, y, w, h], got {ann['bbox']!r}")
            x, y, w, h = (number(v, "bbox", where) for v in ann["bbox"])
            photo = photos[ann["image_id"]]
            box = check_box((x, y, x + w, y + h), where)
            die = Die(
                value,
                on_photo(box, photo.width, photo.height, where),
                number(ann.get("score", 1.0), "score", where),
                _attr_bool(attrs, "on_table", True, where),
                _attr_bool(attrs, "cocked", False, where) or cocked,
            )
            photo.dice.append(die)
    if image_root is not None:  # the photos are wanted from there
        finder.check(path, missing)
    return list(photos.values())
