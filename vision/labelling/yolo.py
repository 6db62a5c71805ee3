"""YOLO datasets that ultralytics trains on and CVAT imports as is.

Layout written by :func:`write_yolo`::

    OUT/data.yaml              ultralytics (and CVAT "Ultralytics YOLO Detection 1.0")
    OUT/train.txt              images/train/<photo> lines, for CVAT
    OUT/images/train/<photo>   the photos (copied or linked)
    OUT/labels/train/<photo>.txt   "class cx cy w h", normalised, class 0..5 = faces 1..6
    OUT/cvat-yolo-1.1/         obj.data, obj.names, train.txt, images.meta (photo sizes),
                               obj_train_data/ (labels, and the photos linked): zip this folder
                               to upload the labels into a CVAT task as "YOLO 1.1"

Photo names are flattened (``table/IMG_1.jpg`` becomes ``table__IMG_1.jpg``). YOLO has no
attributes: off-table flags and confidences are not carried; cocked dice become class 6
``cocked`` when ``cocked_class=True`` (their best-guess face is then dropped).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

from vision.atomic import atomic_write
from vision.types import Die

from .checks import on_photo
from .model import (
    COCKED_NAME,
    IMAGE_EXTENSIONS,
    VALUE_NAMES,
    ImageMode,
    LabelFormatError,
    LabelledPhoto,
    check_box,
    entry,
    flat_names,
    image_size,
    place_image,
    place_photo,
    read_text,
    value_of_name,
)

__all__ = ["read_yolo", "write_yolo"]

SUBSET = "train"
CVAT_DIR = "cvat-yolo-1.1"


def _line(die: Die, photo: LabelledPhoto, cocked_class: bool) -> str | None:
    """The label line of ``die``, its box clipped to the photo (ultralytics drops a photo whose
    labels run past its edges); None for a box with no area left in the photo."""
    width, height = photo.width, photo.height
    if cocked_class and die.cocked:
        cls = 6
    elif 1 <= die.value <= 6:  # faceless cocked ones without cocked_class: write_yolo
        cls = die.value - 1
    else:
        raise ValueError(f"{photo.name}: die value must be 1..6 to write YOLO, got {die.value}")
    x1, y1, x2, y2 = (float(v) for v in die.box)
    x1, x2 = (min(max(v, 0.0), width) for v in (x1, x2))
    y1, y2 = (min(max(v, 0.0), height) for v in (y1, y2))
    if x2 <= x1 or y2 <= y1:
        return None
    cx, cy = (x1 + x2) / 2 / width, (y1 + y2) / 2 / height
    w, h = (x2 - x1) / width, (y2 - y1) / height
    return f"{cls} {cx:.7f} {cy:.7f} {w:.7f} {h:.7f}"


def write_yolo(
    photos: Sequence[LabelledPhoto],
    out: str | os.PathLike[str],
    *,
    images: ImageMode = "copy",
    cocked_class: bool = False,
    val_is_train: bool = False,
) -> Path:
    """Write ``photos`` as a YOLO dataset in ``out``; return the path of its ``data.yaml``.

    ``images="copy"`` or ``"link"`` needs every photo's ``image`` path; ``"none"`` writes labels
    only (for a CVAT upload into a task that already holds the photos).

    There is no held-out split. ``data.yaml`` says ``val: []``: CVAT's "Ultralytics YOLO" import
    reads each of its keys as a subset of photos, so ``val: images/train`` put every photo and
    box in twice. With ``val_is_train``, it says ``val: images/train`` (a training folder:
    ultralytics validates, and ``dicecam eval`` measures, on the photos themselves).

    Example:
        >>> import tempfile
        >>> from vision.types import Die
        >>> photos = [LabelledPhoto("a.jpg", 640, 480, [Die(5, (10, 10, 40, 40), 0.9)])]
        >>> out = Path(tempfile.mkdtemp()) / "yolo"
        >>> write_yolo(photos, out, images="none").relative_to(out.parent).as_posix()
        'yolo/data.yaml'
        >>> (out / "labels" / "train" / "a.txt").read_text()
        '4 0.0390625 0.0520833 0.0468750 0.0625000\\n'
    """
    out = Path(out)
    if not cocked_class:  # said before any file is written: a half-written --out stayed behind
        faceless = [p.name for p in photos if any(d.value == 0 and d.cocked for d in p.dice)]
        if faceless:
            shown = ", ".join(faceless[:5]) + (
                f" and {len(faceless) - 5} more" if len(faceless) > 5 else ""
            )
            raise ValueError(
                f"expected dice labelled 1..6, got a cocked die without a top face in "
                f"{len(faceless)} photo(s) ({shown}), which has no class 1..6: write YOLO with "
                "--cocked-class (class 6 'cocked')"
            )
    # every line before any file: a bad value raised after some photos were written
    texts = [
        "".join(f"{line}\n" for d in photo.dice if (line := _line(d, photo, cocked_class)))
        for photo in photos
    ]
    names = list(VALUE_NAMES) + ([COCKED_NAME] if cocked_class else [])
    img_dir, lbl_dir = out / "images" / SUBSET, out / "labels" / SUBSET
    cvat_dir = out / CVAT_DIR / f"obj_{SUBSET}_data"
    for d in (lbl_dir, cvat_dir):
        d.mkdir(parents=True, exist_ok=True)
    listing, cvat_listing, sizes = [], [], []
    flats = flat_names(photos, portable=images != "none")
    for photo, flat, text in zip(photos, flats, texts, strict=True):
        if images != "none":
            place_photo(photo, img_dir / flat, images)
            # datumaro's "yolo" import of OUT finds cvat-yolo-1.1/obj.data first and wants each
            # photo beside its labels there: a link to the one placed, no second copy
            place_image(img_dir / flat, cvat_dir / flat, "link")
        stem = Path(flat).stem
        atomic_write(lbl_dir / f"{stem}.txt", text, sync=False)  # whole files, not flushed
        atomic_write(cvat_dir / f"{stem}.txt", text, sync=False)
        listing.append(f"images/{SUBSET}/{flat}")
        cvat_listing.append(f"data/obj_{SUBSET}_data/{flat}")
        sizes.append(f"{shlex.quote(stem)} {photo.height} {photo.width}\n")
    atomic_write(out / "train.txt", "".join(f"{p}\n" for p in listing))
    atomic_write(out / "data.yaml", _data_yaml(names, val_is_train))
    cvat = out / CVAT_DIR
    atomic_write(cvat / "obj.names", "".join(f"{n}\n" for n in names))
    atomic_write(
        cvat / "obj.data",
        f"classes = {len(names)}\nnames = data/obj.names\n{SUBSET} = data/{SUBSET}.txt\n"
        "backup = backup/\n",
    )
    atomic_write(cvat / f"{SUBSET}.txt", "".join(f"{p}\n" for p in cvat_listing))
    # "<photo> <height> <width>" lines: datumaro reads the labels without the photos (images none)
    atomic_write(cvat / "images.meta", "".join(sizes))
    return out / "data.yaml"


def _data_yaml(names: Sequence[str], val_is_train: bool) -> str:
    """The text of ``data.yaml`` (see :func:`write_yolo` for ``val_is_train``)."""
    listed = "".join(f"  {i}: '{n}'\n" for i, n in enumerate(names))
    header = (
        "# Written by dicecam label. No `path:` key: ultralytics resolves these folders\n"
        "# relative to this file. Faces: class 0 is a die showing 1, class 5 one showing 6.\n"
        "# No `nc:` either: CVAT reads every key it does not know as a subset of photos.\n"
    )
    if val_is_train:
        return f"{header}train: images/{SUBSET}\nval: images/{SUBSET}\nnames:\n{listed}"
    return (
        f"{header}# No held-out photos: `val: images/{SUBSET}` would make CVAT import each photo\n"
        f"# twice. To train on this folder with ultralytics, set `val: images/{SUBSET}`.\n"
        f"train: images/{SUBSET}\nval: []\nnames:\n{listed}"
    )


def _read_names(root: Path) -> list[str]:
    data_yaml = root / "data.yaml"
    if data_yaml.is_file():
        text = read_text(data_yaml)
        try:
            import yaml
        except ImportError:  # pyyaml comes with the training extra; data.yaml is simple enough
            names = _names_without_yaml(text)
        else:
            try:
                data = yaml.safe_load(text) or {}
            except yaml.YAMLError as exc:
                raise LabelFormatError(f"{data_yaml}: not valid YAML ({exc})") from exc
            names = data.get("names") if isinstance(data, dict) else None
        if isinstance(names, dict):
            with entry(f"{data_yaml}: names"):
                return [str(names[k]) for k in sorted(names, key=int)]
        if isinstance(names, list):
            return [str(n) for n in names]
        raise LabelFormatError(f"{data_yaml}: expected a `names:` list or mapping, got {names!r}")
    for candidate in (root / "obj.names", root / CVAT_DIR / "obj.names"):
        if candidate.is_file():
            return [n.strip() for n in read_text(candidate).splitlines() if n.strip()]
    return list(VALUE_NAMES)


def _names_without_yaml(text: str) -> list[str] | dict[int, str] | None:
    """``names:`` of a data.yaml as an inline list, a block list or a block mapping."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("names:"):
            continue
        rest = line[len("names:") :].split("#")[0].strip()
        if rest.startswith("["):
            return [n.strip().strip("'\"") for n in rest.strip("[]").split(",") if n.strip()]
        items: list[str] = []
        mapping: dict[int, str] = {}
        for sub in lines[i + 1 :]:
            if not sub.startswith((" ", "\t")) or not sub.strip():
                break
            entry = sub.split("#")[0].strip()
            if entry.startswith("- "):
                items.append(entry[2:].strip().strip("'\""))
            elif ":" in entry:
                key, value = entry.split(":", 1)
                if key.strip().isdigit():
                    mapping[int(key)] = value.strip().strip("'\"")
        return mapping or items or None
    return None


def _label_dirs(root: Path) -> list[tuple[Path, Path | None]]:
    """(labels folder, matching images folder or None) pairs found under ``root``."""
    pairs = []
    labels = root / "labels"
    if labels.is_dir():
        subs = [d for d in sorted(labels.iterdir()) if d.is_dir()]
        for sub in subs or [labels]:
            rel = sub.relative_to(labels)
            img = root / "images" / rel
            pairs.append((sub, img if img.is_dir() else None))
    for split in sorted(d for d in root.iterdir() if (d / "labels").is_dir()):
        img = split / "images"
        pairs.append((split / "labels", img if img.is_dir() else None))
    for sub in sorted(root.glob("obj_*_data")):
        pairs.append((sub, sub))
    if not pairs and any(root.glob("*.txt")):
        pairs.append((root, root))
    return pairs


def _find_image(folder: Path | None, stem: str) -> Path | None:
    """The photo named ``stem`` plus a photo suffix in ``folder`` (not ``stem.a.jpg``, nor an
    iPhone's ``stem.AAE`` sidecar)."""
    if folder is None:
        return None
    for path in sorted(folder.glob(f"{_glob_escape(stem)}.*")):
        if path.stem == stem and path.suffix.lower() in IMAGE_EXTENSIONS and path.is_file():
            return path
    return None


def _glob_escape(text: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in text)


def read_yolo(
    root: str | os.PathLike[str], *, sizes: Mapping[str, tuple[int, int]] | None = None
) -> list[LabelledPhoto]:
    """Read a YOLO dataset (ultralytics ``images/ labels/`` or CVAT ``obj_train_data/``).

    Pixel boxes need each photo's size: it is read from the photo beside the labels, or from
    ``sizes`` (label stem -> (width, height)) when the photos are elsewhere.

    Raises:
        FileNotFoundError: no labels folder, or a photo (and its size) cannot be found.
        LabelFormatError: a line is not ``class cx cy w h`` with a known class.
    """
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"expected a YOLO dataset folder, got {str(root)!r}")
    names = _read_names(root)
    pairs = _label_dirs(root)
    if not pairs:
        raise FileNotFoundError(f"no labels/ or obj_*_data/ folder of .txt labels in {root}")
    photos: list[LabelledPhoto] = []
    seen: set[Path] = set()
    for lbl_dir, img_dir in pairs:
        for txt in sorted(lbl_dir.glob("*.txt")):
            if txt.resolve() in seen or txt.name in {
                "train.txt",
                "valid.txt",
                "val.txt",
                "test.txt",
            }:
                continue
            seen.add(txt.resolve())  # the same stem in two splits is two photos
            image = _find_image(img_dir, txt.stem)
            if sizes and txt.stem in sizes:
                width, height = sizes[txt.stem]
            elif image is not None:
                width, height = image_size(image)
            else:
                raise FileNotFoundError(
                    f"no photo named {txt.stem}.* beside {txt}: its size is needed for pixel boxes"
                )
            with entry(str(txt)):
                lines = read_text(txt).splitlines()
            dice = [
                _parse_line(line, names, width, height, f"{txt}:{n}")
                for n, line in enumerate(lines, 1)
                if line.strip()
            ]
            name = image.name if image is not None else txt.stem
            photos.append(LabelledPhoto(name, width, height, dice, image))
    return photos


def _parse_line(line: str, names: list[str], width: int, height: int, where: str) -> Die:
    parts = line.split()
    if len(parts) != 5:
        raise LabelFormatError(f"{where}: expected 'class cx cy w h', got {line.strip()!r}")
    try:
        cls = int(parts[0])
        cx, cy, w, h = (float(p) for p in parts[1:])
    except ValueError as exc:
        raise LabelFormatError(f"{where}: expected numbers, got {line.strip()!r}") from exc
    if not 0 <= cls < len(names):
        raise LabelFormatError(f"{where}: class {cls} is not in names {names}")
    value, cocked = value_of_name(names[cls], where)
    box = (
        (cx - w / 2) * width,
        (cy - h / 2) * height,
        (cx + w / 2) * width,
        (cy + h / 2) * height,
    )
    return Die(value, on_photo(check_box(box, where), width, height, where), 1.0, True, cocked)
