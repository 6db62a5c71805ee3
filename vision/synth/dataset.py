"""Write a YOLO-format dataset of synthetic rolls: images, labels, sidecar JSON, data.yaml.

Layout (relative to ``out``)::

    images/{train,val}/NAME.jpg   labels/{train,val}/NAME.txt   meta/{train,val}/NAME.json
    data.yaml   (train: images/train, val: images/val, names 0..5 = faces 1..6, 6 = cocked)

Image ``index`` of a ``seed`` is always the same bytes, whichever worker renders it.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import math
import multiprocessing as mp
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vision.atomic import atomic_write

from .sample import make_sample
from .scene import FACE_KINDS, check_elevation

__all__ = ["CLASS_NAMES", "DatasetSummary", "sample_name", "sample_split", "write_dataset"]

CLASS_NAMES = {0: "1", 1: "2", 2: "3", 3: "4", 4: "5", 5: "6", 6: "cocked"}
FORMAT_VERSION = 1

DATA_YAML = """# dicecam synthetic rolls (dicecam synth). No `path:` key: ultralytics resolves train/val
# relative to this file's folder.
train: images/train
val: images/val
names:
  0: '1'
  1: '2'
  2: '3'
  3: '4'
  4: '5'
  5: '6'
  6: 'cocked'
"""


@dataclass(slots=True)
class DatasetSummary:
    """What :func:`write_dataset` wrote."""

    out: Path
    images: int
    train: int
    val: int
    dice: int
    labelled: int
    states: dict[str, int]


def sample_split(index: int, val_fraction: float) -> str:
    """ "val" for an evenly spread ``val_fraction`` of indices, else "train".

    Example:
        >>> [sample_split(i, 0.25) for i in range(4)]
        ['train', 'train', 'train', 'val']
    """
    return (
        "val"
        if math.floor((index + 1) * val_fraction) > math.floor(index * val_fraction)
        else "train"
    )


def sample_name(seed: int, index: int) -> str:
    return f"synth_s{seed}_{index:06d}"


def _validate(n: int, workers: int, val_fraction: float, size: tuple[int, int]) -> None:
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive number of images, got {n!r}")
    if not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be at least 1, got {workers!r}")
    if not 0.0 <= val_fraction < 1.0:
        raise ValueError(f"val_fraction must be in [0, 1), got {val_fraction!r}")
    w, h = size
    if not (64 <= w <= 4096 and 64 <= h <= 4096):
        raise ValueError(f"image size must be between 64 and 4096 pixels a side, got {w}x{h}")


_PARENT: int | None = None
"""In a worker of :func:`write_dataset`'s pool: the process id of the run that started it."""

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _follow_parent(parent: int) -> None:
    """The pool's initializer: the worker dies with the run that started it (SIGKILL, a power
    cut of the main process alone), instead of writing on the images handed to it. On Linux
    the kernel kills it (``PR_SET_PDEATHSIG``); elsewhere (macOS) it stops before its next
    image once its parent is not ``parent``; on Windows, whose ``os.getppid`` keeps the id of
    a parent gone, it is as before."""
    global _PARENT
    _PARENT = parent
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):  # no prctl: the check below
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    _stop_if_orphaned()


def _stop_if_orphaned() -> None:
    if _PARENT is not None and os.getppid() != _PARENT:
        os._exit(1)  # nobody is left to hand a result to


def _write_one(
    job: tuple[Path, int, int, float, int, int, dict[str, Any]],
) -> dict[str, int]:
    _stop_if_orphaned()
    out, seed, index, val_fraction, w, h, options = job
    split = sample_split(index, val_fraction)
    name = sample_name(seed, index)
    sample = make_sample(seed, index, w, h, **options)
    lines = sample.yolo_lines()
    meta = {
        "name": name,
        "split": split,
        "seed": seed,
        "index": index,
        "format": FORMAT_VERSION,
        **sample.meta,
    }
    # the photo last, each file whole: a run killed halfway never leaves a photo without its
    # labels (training would learn its dice as background) nor half a JPEG
    atomic_write(
        out / "labels" / split / f"{name}.txt", "".join(f"{x}\n" for x in lines), sync=False
    )
    atomic_write(
        out / "meta" / split / f"{name}.json", json.dumps(meta, separators=(",", ":")), sync=False
    )
    atomic_write(out / "images" / split / f"{name}.jpg", sample.jpeg, sync=False)
    counts = {"dice": len(sample.dice), "labelled": len(lines), f"split_{split}": 1}
    for d in sample.dice:
        counts[f"state_{d['state']}"] = counts.get(f"state_{d['state']}", 0) + 1
    return counts


def write_dataset(
    out: str | Path,
    n: int,
    *,
    seed: int = 0,
    workers: int = 1,
    val_fraction: float = 0.1,
    size: tuple[int, int] = (640, 640),
    start: int = 0,
    progress: Callable[[int, int], None] | None = None,
    face_kind: str | None = None,
    lean_share: float | None = None,
    pieces_share: float | None = None,
    elevation: tuple[float, float] | None = None,
    wide_styles: float | None = None,
    stone_share: float | None = None,
) -> DatasetSummary:
    """Render images ``start .. start+n-1`` of the ``seed`` stream into ``out``; ``face_kind``
    gives every die that kind of face, ``lean_share`` is the share of scenes with an extra die
    leaning on something, ``pieces_share`` the share with game pieces standing on the table,
    ``elevation`` the camera's elevation range in degrees, ``wide_styles`` the share of
    scenes whose dice come from a far wider range of colours and pip sizes, and ``stone_share``
    the share whose table top is stone (granite, terrazzo; see
    :func:`vision.synth.scene.sample_scene`).

    Example:
        >>> import tempfile
        >>> s = write_dataset(tempfile.mkdtemp(), 2, seed=1, size=(128, 128))
        >>> (s.images, s.train + s.val)
        (2, 2)
    """
    _validate(n, workers, val_fraction, size)
    if face_kind is not None and face_kind not in FACE_KINDS:
        raise ValueError(f"face_kind must be one of {FACE_KINDS}, got {face_kind!r}")
    shares = (
        ("lean_share", lean_share),
        ("pieces_share", pieces_share),
        ("wide_styles", wide_styles),
        ("stone_share", stone_share),
    )
    for key, share in shares:
        if share is not None and not 0.0 <= share <= 1.0:
            raise ValueError(f"{key} must be in [0, 1], got {share!r}")
    options = {
        k: v
        for k, v in (
            ("face_kind", face_kind),
            ("lean_share", lean_share),
            ("pieces_share", pieces_share),
            ("elevation_range", None if elevation is None else check_elevation(elevation)),
            ("wide_styles", wide_styles),
            ("stone_share", stone_share),
        )
        if v is not None
    }
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"output must be a folder, but {out} is a file")
    for kind in ("images", "labels", "meta"):
        for split in ("train", "val"):
            (out / kind / split).mkdir(parents=True, exist_ok=True)
    atomic_write(out / "data.yaml", DATA_YAML)
    jobs = [
        (out, int(seed), i, float(val_fraction), int(size[0]), int(size[1]), options)
        for i in range(start, start + n)
    ]
    totals: dict[str, int] = {}

    def add(counts: dict[str, int], done: int) -> None:
        for k, v in counts.items():
            totals[k] = totals.get(k, 0) + v
        if progress is not None:
            progress(done, n)

    if workers == 1:
        for k, job in enumerate(jobs, 1):
            add(_write_one(job), k)
    else:
        pool = mp.get_context("spawn").Pool(
            workers, initializer=_follow_parent, initargs=(os.getpid(),)
        )
        with pool:
            for k, counts in enumerate(pool.imap_unordered(_write_one, jobs, chunksize=4), 1):
                add(counts, k)
    states = {k[6:]: v for k, v in sorted(totals.items()) if k.startswith("state_")}
    return DatasetSummary(
        out=out,
        images=n,
        train=totals.get("split_train", 0),
        val=totals.get("split_val", 0),
        dice=totals.get("dice", 0),
        labelled=totals.get("labelled", 0),
        states=states,
    )
