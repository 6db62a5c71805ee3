"""YOLO-format datasets as ``dicecam eval`` and training read them: where the photos of a
split are, and each photo's labelled dice (:class:`LabelledImage`).

A dataset is any of: a ``data.yaml`` (its ``val``/``test``/``train`` entry), a folder holding a
``data.yaml``, a folder with ``images/<split>/`` and ``labels/<split>/``, or a folder with
``images/`` and ``labels/``. Labels are ``class cx cy w h`` (normalised; polygons are reduced to
their bounding box); class ``k`` is face ``k + 1`` and class 6 (or a class named ``cocked``) a
cocked die. Synthetic sets (:mod:`vision.synth`) add ``meta/<image stem>.json`` beside
``labels/`` giving each die's state (see :mod:`vision.evaluate`).

Example (a synthetic set: ``dicecam synth --n 3 --seed 7 --size 320 240 --val-fraction 0.99``):
    >>> import tempfile
    >>> from vision.synth import write_dataset
    >>> folder = tempfile.TemporaryDirectory()
    >>> _ = write_dataset(folder.name, 3, seed=7, size=(320, 240), val_fraction=0.99)
    >>> images, _ = find_images(folder.name)  # the val split
    >>> [p.name for p in images]
    ['synth_s7_000001.jpg', 'synth_s7_000002.jpg']
    >>> photo = load_labels(images[0])
    >>> len(photo.labels), photo.states[0], photo.bust
    (8, 'table', False)
    >>> folder.cleanup()
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vision.io import IMAGE_SUFFIXES
from vision.matching import (
    TruthDie,
    clear_die,
    face_legible,
    roll_bust,
    surface_in_view,
    table_state,
)

__all__ = [
    "DatasetError",
    "LabelledImage",
    "class_names",
    "find_images",
    "iter_dataset",
    "load_labels",
    "shown_size",
    "sibling_path",
]

SPLIT_ALIASES = {
    "val": ("val", "valid", "validation", "eval"),
    "test": ("test",),
    "train": ("train",),
}


COORD_SLACK = 1e-3
"""How far outside 0-1 a label's normalised number may lie (rounding) before it is refused."""

ALL_SPLITS = frozenset(name for names in SPLIT_ALIASES.values() for name in names)
YAML_NAMES = ("data.yaml", "data.yml", "dataset.yaml")


class DatasetError(ValueError):
    """The dataset path is not a YOLO-format dataset dicecam can read."""


@dataclass(slots=True)
class LabelledImage:
    """One photo and its truth, boxes still normalised (``class, cx, cy, w, h``)."""

    image: Path
    labels: list[tuple[int, float, float, float, float]] = field(default_factory=list)
    states: list[str] | None = None
    """Each labelled die's state from the sidecar, in label order (None without a sidecar)."""
    bust: bool | None = None
    """True when the sidecar puts any die (labelled or hidden) off the table, False when every
    die is on it; None without a sidecar, or when no die is off but one is still in the air
    above the surface (:data:`~vision.matching.ROLLING`: the roll has not settled)."""
    clear: list[bool | None] | None = None
    """Whether each labelled die could be read by anyone (:func:`vision.matching.clear_die`)."""
    surface_in_view: bool | None = None
    """False when the sidecar's outline is empty: no part of the playing surface is in the
    photo (the dice fell off and the camera looks at the floor). None without a sidecar or
    an outline in it."""
    rolled: int | None = None
    """How many dice were rolled, hidden and out-of-photo ones too (the sidecar's every die);
    None without a sidecar."""
    legible: list[bool | None] | None = None
    """Whether each labelled die's top face shows its pips at all in the photo, not washed out
    (:func:`vision.matching.face_legible`); None without a sidecar that measures it."""

    def truth(self, width: int, height: int, names: dict[int, str] | None = None) -> list[TruthDie]:
        """The labelled dice in pixels of a ``width`` x ``height`` image."""
        dice = []
        for k, (cls, cx, cy, w, h) in enumerate(self.labels):
            box = (
                (cx - w / 2) * width,
                (cy - h / 2) * height,
                (cx + w / 2) * width,
                (cy + h / 2) * height,
            )
            state = self.states[k] if self.states else None
            clear = self.clear[k] if self.clear else None
            try:
                value = _class_value(cls, names)
            except DatasetError as exc:
                label = sibling_path(self.image, "labels", ".txt")
                raise DatasetError(f"{label}: die {k + 1}: {exc}") from None
            dice.append(TruthDie(value, box, state, clear))
        return dice


def _class_value(cls: int, names: dict[int, str] | None) -> int | None:
    name = (names or {}).get(cls)
    if name is not None:
        key = name.strip().lower()
        if key.isdecimal():  # '0' to '5' (faces counted from 0) put two classes on face 1
            if 1 <= int(key) <= 6:
                return int(key)
            raise DatasetError(
                f"expected class names '1' to '6' (faces) or 'cocked', got class {cls} = {name!r}"
            )
        if "cock" in key:
            return None
    if 0 <= cls <= 5:
        return cls + 1
    if cls == 6:
        return None
    raise DatasetError(f"expected label classes 0-5 (faces 1-6) or 6 (cocked), got class {cls}")


def _read_yaml(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8-sig")
    try:
        import yaml  # PyYAML comes with the training extra; a simple parser covers the rest

        data = yaml.safe_load(text)
    except ImportError:
        data = {}
        for line in text.splitlines():
            m = re.match(r"^([A-Za-z_]+):\s*(.*?)\s*(#.*)?$", line)
            if m and m.group(2):
                data[m.group(1)] = m.group(2).strip("'\"")
    except Exception as exc:
        raise DatasetError(f"cannot parse {path}: {exc}") from None
    if not isinstance(data, dict):
        raise DatasetError(f"expected a YAML mapping in {path}, got {type(data).__name__}")
    return data


def _images_in(path: Path) -> list[Path]:
    if path.is_file() and path.suffix == ".txt":  # a list of image paths
        base = path.parent
        lines = [
            ln.strip() for ln in path.read_text(encoding="utf-8-sig").splitlines() if ln.strip()
        ]
        return [p if p.is_absolute() else (base / p) for p in map(Path, lines)]
    if not path.is_dir():
        raise DatasetError(f"no such image folder: {path}")
    return sorted(p for p in path.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file())


def find_images(
    dataset: str | Path, split: str = "val"
) -> tuple[list[Path], dict[int, str] | None]:
    """The images of ``split`` in a dataset, and the class names its data.yaml gives (if any).

    Raises:
        DatasetError: nothing that looks like a YOLO dataset at ``dataset``.
    """
    root = Path(dataset)
    if not root.exists():
        raise DatasetError(f"no such dataset: {root}")
    yaml_path = root if root.is_file() else None
    if root.is_dir():
        for sub in SPLIT_ALIASES.get(split, (split,)):
            if (root / "images" / sub).is_dir():
                return _images_in(root / "images" / sub), None
        folder = root / "images"
        if folder.is_dir() and any(p.suffix.lower() in IMAGE_SUFFIXES for p in folder.iterdir()):
            return _images_in(folder), None
        splits = sorted(p.name for p in folder.glob("*/") if p.name in ALL_SPLITS)
        if folder.is_dir() and not splits and (photos := _images_in(folder)):
            return photos, None  # photos in subfolders of their own (batch1/, ...)
        if folder.is_dir() and not any((root / n).is_file() for n in YAML_NAMES):
            if splits:
                raise DatasetError(
                    f"expected images/{split}/ in {root} for split {split!r}, got "
                    + ", ".join(f"images/{n}/" for n in splits)
                )
            what = "no image in it or its subfolders" if any(folder.iterdir()) else "empty"
            raise DatasetError(f"no photos in {folder}: the folder is {what}")
        for name in YAML_NAMES:
            if (root / name).is_file():
                yaml_path = root / name
                break
    if yaml_path is None or yaml_path.suffix not in (".yaml", ".yml"):
        raise DatasetError(
            f"expected a data.yaml, or a folder with images/ and labels/ (or images/{split}/), "
            f"got {root}"
        )
    data = _read_yaml(yaml_path)
    base = yaml_path.parent
    if data.get("path"):
        base = (base / str(data["path"])).resolve()
    entry = next((data[k] for k in SPLIT_ALIASES.get(split, (split,)) if data.get(k)), None)
    if entry is None:
        empty = [k for k in SPLIT_ALIASES.get(split, (split,)) if k in data]
        named = [k for names in SPLIT_ALIASES.values() for k in names if data.get(k)]
        others = [k for k in named if k not in empty]
        hint = f": pass --split {others[0]} to read its {others[0]} photos" if others else ""
        if empty:
            raise DatasetError(
                f"{yaml_path} lists no photos for '{split}' ({empty[0]}: {data[empty[0]]!r})" + hint
            )
        raise DatasetError(
            f"{yaml_path} has no '{split}' entry (keys: {', '.join(map(str, data))}){hint}"
        )
    images: list[Path] = []
    for item in entry if isinstance(entry, list) else [entry]:
        images += _images_in(Path(item) if Path(item).is_absolute() else base / str(item))
    return images, _names_of(data)


def class_names(yaml_path: Path) -> dict[int, str] | None:
    """The class names a data.yaml gives (``names:`` as a list or a mapping), or None.

    Raises:
        DatasetError: not a YAML mapping.
        OSError, UnicodeDecodeError: the file cannot be read.
    """
    return _names_of(_read_yaml(yaml_path))


def _names_of(data: dict[str, Any]) -> dict[int, str] | None:
    names = data.get("names")
    if isinstance(names, list):
        names = dict(enumerate(names))
    return {int(k): str(v) for k, v in names.items()} if isinstance(names, dict) else None


def sibling_path(image: Path, folder: str = "labels", suffix: str = ".txt") -> Path:
    """The label file (or ``meta/`` sidecar) of ``image`` by ultralytics' rule: the last
    ``/images/`` in the path becomes ``/<folder>/``.

    Example:
        >>> sibling_path(Path("set/images/train/a.jpg")).as_posix()
        'set/labels/train/a.txt'
    """
    parts = list(image.parts)
    for i in range(len(parts) - 2, -1, -1):
        if parts[i] == "images":
            parts[i] = folder
            return Path(*parts).with_suffix(suffix)
    return image.with_suffix(suffix)


def load_labels(image: Path) -> LabelledImage:
    """Read the label file (and optional ``meta/`` sidecar) of one image.

    Raises:
        DatasetError: a label line that is not ``class cx cy w h`` (or a polygon).
    """
    label_path = sibling_path(image, "labels", ".txt")
    labels = []
    if label_path.is_file():
        try:
            text = label_path.read_text(encoding="utf-8-sig")
        except (OSError, ValueError) as exc:
            raise DatasetError(f"cannot read labels {label_path}: {exc}") from None
        for n, line in enumerate(text.splitlines(), start=1):
            parts = line.split()
            if not parts:
                continue
            try:
                klass, nums = float(parts[0]), [float(x) for x in parts[1:]]
                cls = int(klass)
            except (ValueError, OverflowError):  # "x", "nan" or "inf" as the class
                raise DatasetError(f"{label_path}:{n}: expected numbers, got {line!r}") from None
            if not all(map(math.isfinite, nums)):
                raise DatasetError(f"{label_path}:{n}: expected finite numbers, got {line!r}")
            if cls != klass or cls < 0:  # "2.5" was read as class 2, face 3
                raise DatasetError(
                    f"{label_path}:{n}: expected a whole class number 0 or more, got {parts[0]!r}"
                )
            if len(nums) == 4:
                cx, cy, w, h = nums
            elif len(nums) >= 6 and len(nums) % 2 == 0:  # polygon: its bounding box
                xs, ys = nums[0::2], nums[1::2]
                cx, cy = (min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2
                w, h = max(xs) - min(xs), max(ys) - min(ys)
            else:
                raise DatasetError(
                    f"{label_path}:{n}: expected 'class cx cy w h', got {len(parts)} fields"
                )
            if w <= 0 or h <= 0:
                raise DatasetError(
                    f"{label_path}:{n}: expected a box of positive width and height, got {line!r}"
                )
            if not all(-COORD_SLACK <= x <= 1 + COORD_SLACK for x in nums):
                # pixel coordinates put the die outside the photo: counted missed, silently
                raise DatasetError(
                    f"{label_path}:{n}: expected coordinates normalised to 0-1 (YOLO), got {line!r}"
                )
            labels.append((cls, cx, cy, w, h))
    return LabelledImage(image, labels, **_states(image, len(labels)))


def _states(image: Path, count: int) -> dict[str, Any]:
    """What the photo's sidecar says, as :class:`LabelledImage` fields: the labelled dice's
    states, clear and legible flags, the roll's bust, whether the playing surface is in view,
    and how many dice were rolled; nothing without a sidecar."""
    meta = sibling_path(image, "meta", ".json")
    if not meta.is_file():
        return {}
    try:
        data = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DatasetError(f"cannot read sidecar {meta}: {exc}") from None
    dice = data.get("dice") if isinstance(data, dict) else data
    if not isinstance(dice, list):
        raise DatasetError(f"{meta}: expected a 'dice' list, got {type(dice).__name__}")
    scene = data.get("scene") if isinstance(data, dict) else None
    surface = scene.get("surface") if isinstance(scene, dict) else None
    every = [table_state(d, surface) if isinstance(d, dict) else d for d in dice]
    if not all(isinstance(s, str) for s in every):
        raise DatasetError(f"{meta}: expected each die to have a 'state' string")
    labelled = [
        (d, st)
        for d, st in zip(dice, every, strict=True)
        if not isinstance(d, dict) or d.get("labelled", True)
    ]
    if len(labelled) != count:
        raise DatasetError(
            f"{meta}: expected one labelled die per label line ({count}), got {len(labelled)}"
        )
    post = scene.get("post") if isinstance(scene, dict) else None
    return {
        "states": [st for _, st in labelled],
        "bust": roll_bust(every),
        "clear": [clear_die(d, post) if isinstance(d, dict) else None for d, _ in labelled],
        "surface_in_view": surface_in_view(data) if isinstance(data, dict) else None,
        "rolled": len(every),
        "legible": [face_legible(d) if isinstance(d, dict) else None for d, _ in labelled],
    }


def shown_size(image: Path) -> tuple[int, int] | None:
    """A photo's width and height as shown (EXIF orientation) from its header; None when even
    that cannot be read."""
    from PIL import Image

    try:
        with Image.open(image) as im:
            w, h = im.size
            try:
                turned = int(im.getexif().get(0x0112, 1)) in (5, 6, 7, 8)
            except Exception:  # EXIF cut off with the rest: as the reader, take it upright
                turned = False
    except Exception:  # not an image at all, or a broken header
        return None
    return (h, w) if turned else (w, h)


def iter_dataset(dataset: str | Path, split: str = "val") -> Iterator[LabelledImage]:
    images, _ = find_images(dataset, split)
    for image in images:
        yield load_labels(image)
