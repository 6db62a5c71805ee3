"""Splitting new labelled photos for fine-tuning: a stable training and held-out part, and photos
the model already knew (a replay sample trained on beside the new ones, and a check sample that
tells whether it forgot them). Photos are linked, not copied, where the system allows.

Example:
    >>> split = split_dataset([Path("my-dice")], Path("runs/finetune/my-dice"))  # doctest: +SKIP
    >>> split.n_train, split.n_held  # doctest: +SKIP
    (40, 10)
"""

from __future__ import annotations

import hashlib
import math
import os
import random
import shutil
from pathlib import Path
from typing import NamedTuple

from vision.io import TRAINING_SUFFIXES
from vision.yolo_dataset import sibling_path

__all__ = ["Split", "SplitError", "check_photos", "split_dataset"]


def _label_for(image: Path, folder: str = "labels", suffix: str = ".txt") -> Path | None:
    """The photo's label file (``images/`` -> ``labels/``), or with ``folder="meta"`` and
    ``suffix=".json"`` its synthetic sidecar; None when there is none."""
    if "images" not in image.parts[:-1]:
        return None
    label = sibling_path(image, folder, suffix)
    return label if label.is_file() else None


def _link_photo(image: Path, label: Path, part: Path, name: str) -> None:
    """Link a labelled photo into the YOLO folder ``part`` as ``name``, with its sidecar (the
    dice's states, for the off-table and clear-dice figures) when it has one."""
    _link(image, part / "images" / name)
    _link(label, (part / "labels" / name).with_suffix(".txt"))
    if (meta := _label_for(image, "meta", ".json")) is not None:
        _link(meta, (part / "meta" / name).with_suffix(".json"))


def _link(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    if dst.exists() or dst.is_symlink():
        dst.unlink()
    try:
        os.symlink(src.resolve(), dst)
    except OSError:
        shutil.copyfile(src, dst)


class Split(NamedTuple):
    """Where :func:`split_dataset` put the photos (YOLO folders: ``images/`` + ``labels/``)."""

    train: Path
    """The new photos to train on."""
    heldout: Path
    """The new photos held out, to measure on."""
    n_train: int
    n_held: int
    replay: Path
    """Photos the model already knew, trained on beside ``train`` (maybe empty)."""
    known: Path
    """Other photos the model already knew, not replayed: a check that it has not forgotten them
    (maybe empty)."""


class SplitError(ValueError):
    """The photos given cannot be split into training and held-out photos."""


def split_dataset(
    data_dirs: list[Path],
    out: Path,
    *,
    holdout: float = 0.2,
    replay: list[Path] | None = None,
    replay_n: int = 300,
    known_n: int = 60,
    seed: int = 0,
) -> Split:
    """Link labelled photos into ``out/train`` and ``out/heldout`` (YOLO layout),
    ``replay_n`` random photos of the ``replay`` folders into ``out/replay`` and ``known_n`` others
    of them into ``out/known``. Replayed and known photos are drawn from those with at least one
    labelled die.

    The replay photos have a folder of their own, so that what learns from the new photos alone
    (the face classifier, which replays every known photo at a set share) can tell them apart.
    """
    train, held, replayed, known = (out / p for p in ("train", "heldout", "replay", "known"))
    for d in [*data_dirs, *(replay or [])]:  # the parts are emptied below: never the user's photos
        if any(
            Path(d).resolve().is_relative_to(part.resolve())
            for part in (train, held, replayed, known)
        ):
            raise SplitError(
                f"expected photos outside the folders this run rewrites ({out}/train, heldout, "
                f"replay, known), got {d}: copy them elsewhere or choose another output folder"
            )
    items = []
    for d in data_dirs:
        for image in sorted(Path(d).rglob("*")):
            if (
                image.suffix.lower() in TRAINING_SUFFIXES
                and (label := _label_for(image)) is not None
            ):
                items.append((image, label))
    if len(items) < 2:
        folders = ", ".join(str(d) for d in data_dirs)
        raise SplitError(
            f"expected at least 2 labelled photos (images/ with labels/ beside it) in {folders}, "
            f"found {len(items)}; label photos with `dicecam label PHOTOS --out OUT`, correct "
            "them, then `dicecam labels import EXPORT --images-from PHOTOS --out DIR`"
        )
    for part in (train, held, replayed, known):  # links of an earlier run, maybe of other photos
        if part.is_dir():
            shutil.rmtree(part)
    scores = [
        int(hashlib.sha1(f"{seed}:{image.name}:{k}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
        for k, (image, _) in enumerate(items)
    ]
    order = sorted(range(len(items)), key=scores.__getitem__)
    # the photos hashed under --holdout, at least one and at most its share rounded up, and
    # one photo left to train on: 3 photos at 0.2 hold out 1 (0.6 rounded up) and train on 2
    most = min(max(1, math.ceil(len(items) * holdout)), len(items) - 1)
    n_held = min(max(1, sum(h < holdout for h in scores)), most)
    held_out = set(order[:n_held])
    n_train = len(items) - n_held
    for k, (image, label) in enumerate(items):
        _link_photo(image, label, held if k in held_out else train, f"{k:05d}_{image.name}")
    rng = random.Random(seed)
    pool = []
    for d in replay or []:  # photos with labelled dice only: an empty label file is most often
        # a label left out (roboflow-dice's dice_417, 15 dice), and would teach "no die here"
        pool += [
            (i, lab)
            for i in sorted(Path(d).rglob("*"))
            if i.suffix.lower() in TRAINING_SUFFIXES
            and (lab := _label_for(i))
            and lab.read_text(encoding="utf-8-sig").strip()
        ]
    drawn = rng.sample(pool, min(replay_n + known_n, len(pool)))
    for k, (image, label) in enumerate(drawn):
        part, name = (replayed, f"replay{k:05d}") if k < replay_n else (known, f"known{k:05d}")
        _link_photo(image, label, part, f"{name}_{image.name}")
    return Split(train, held, n_train, n_held, replayed, known)


def check_photos(split: Split) -> None:
    """Open every new photo of ``split`` (header and pixels, at a small scale): one that is not
    an image, or is cut short, would fail the run minutes later with a traceback.

    Raises:
        SplitError: naming the photos (at most 3) that cannot be read, and why.
    """
    from vision.io import ImageError, load_image

    bad = []
    for part in (split.train, split.heldout):
        for link in sorted((part / "images").iterdir()):
            photo = link.resolve()  # the player's own photo, not the link to it, is named
            try:
                load_image(photo, min_long_side=64)
            except ImageError as exc:
                bad.append(str(exc))
            except Exception:  # ultralytics' Image.open, tried on a non-photo, wants pi-heif
                bad.append(f"not an image (expected JPEG, PNG, BMP, WebP or TIFF): {photo}")
    if bad:
        more = f" (and {len(bad) - 3} more)" if len(bad) > 3 else ""
        raise SplitError(
            f"expected photos training can read, got {len(bad)} it cannot: "
            + "; ".join(bad[:3])
            + more
        )
