"""How :class:`vision.DiceReader` reads a chunk of photos: the looks it takes, and when.

1. The first look, at the model's own size. Photos of one input shape share an inference.
2. A mirror look at a photo with a doubtful die (:func:`vision.looks.doubtful`): a box the mirror
   image does not confirm loses up to half its confidence (:mod:`vision.fusion`).
3. A second look, larger, at a photo whose dice are small (:func:`vision.looks.small_dice`),
   which replaces the first: the first look's dice are then neither mirrored nor read. A photo
   read short of the dice count it was told takes the second look too, kept if it finds more.
4. The dice of the look kept (:func:`vision.dice_stages.photo_dice`), then the table step.

:func:`read_chunk` runs them with the models and settings of a :class:`LookReader` (a
:class:`vision.DiceReader` has them all).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from vision.boxes import Letterbox, letterbox, to_planes
from vision.dice_stages import DiceStages, photo_dice
from vision.io import LoadedImage
from vision.looks import (
    Look,
    decode_look,
    doubtful,
    mirror_outputs,
    photo_boxes,
    small_dice,
    with_mirror_look,
)
from vision.types import Reading

if TYPE_CHECKING:
    from numpy.typing import NDArray

__all__ = ["LookReader", "read_chunk"]


class LookReader(DiceStages, Protocol):
    """The detector, models and settings :func:`read_chunk` reads with."""

    iou: float
    max_det: int
    imgsz: tuple[int, int]
    fixed_batch: int | None
    roles: Any
    end2end: bool
    table: Any
    second_look: int | None
    second_look_below: float
    second_look_conf: float
    fit_count: bool
    fit_conf: float
    mirror: bool
    sure_faint: Any

    def input_shape(
        self, height: int, width: int, *, size: int | None = None
    ) -> tuple[int, int]: ...

    def _run(self, blob: NDArray[np.float32], *, second: bool = False) -> NDArray[np.float32]: ...


def read_chunk(
    reader: LookReader, loaded: list[tuple[LoadedImage, float]], expected: int | None
) -> list[Reading]:
    """The readings of ``loaded`` photos (each with the seconds its loading took), told the
    dice count ``expected`` when known. Each reading's ``latency_ms`` is its own loading and
    letterboxing plus its share of the chunk's inference, decoding and table step."""
    n = len(loaded)
    readings: list[Reading | None] = [None] * n
    own = [t for _, t in loaded]
    small = [False] * n
    shared = _detect(reader, loaded, range(n), None, readings, own, expected, small)
    again = [i for i in range(n) if small[i]]
    # photos read short of the dice count get the second look too, kept if it finds more
    short = {
        i: r
        for i, r in enumerate(readings)
        if r is not None and r.missing and reader.fit_count and reader.second_look and not small[i]
    }
    if again or short:  # small dice, or short of the count: read again at the larger size
        looked = again + list(short)
        extra = _detect(reader, loaded, looked, reader.second_look, readings, own, expected)
        for i in looked:
            own[i] += extra / len(looked)
        for i, first in short.items():
            if (second := readings[i]) is None or second.missing >= first.missing:
                readings[i] = first
    done = [r for r in readings if r is not None]
    if reader.table is not None:  # outline (calibrated or learned) -> on_table, outline
        t0 = time.perf_counter()
        for reading, (img, _) in zip(done, loaded, strict=True):
            reader.table.apply(reading, img.rgb)
        shared += time.perf_counter() - t0
    for reading, t in zip(done, own, strict=True):
        reading.latency_ms = (t + shared / n) * 1000
    return done


def _detect(
    reader: LookReader,
    loaded: list[tuple[LoadedImage, float]],
    indices: Iterable[int],
    size: int | None,
    readings: list[Reading | None],
    own: list[float],
    expected: int | None,
    small: list[bool] | None = None,
) -> float:
    """Detect and read the photos ``indices`` at ``size`` (default the model's), into
    ``readings``, and into ``small`` (when given) whether each photo wants a second look;
    photos of one input shape share an inference (all of them for a fixed model). Returns
    the shared time (inference, decoding); letterboxing goes to ``own``."""
    groups: dict[tuple[int, int], list[int]] = {}
    for i in indices:
        shape = reader.input_shape(*loaded[i][0].rgb.shape[:2], size=size)
        groups.setdefault(shape, []).append(i)
    shared = 0.0
    floor = _floor(reader, expected)
    second = size is not None
    for (th, tw), members in groups.items():
        t0 = time.perf_counter()
        blob = np.empty((reader.fixed_batch or len(members), 3, th, tw), np.float32)
        blob[len(members) :] = 0  # a fixed batch's rows past the photos
        buf = np.empty((th, tw, 3), np.uint8)
        boxes: list[Letterbox] = []
        for row, i in enumerate(members):
            _, lb = letterbox(loaded[i][0].rgb, (th, tw), out=buf)
            to_planes(buf, blob[row])
            boxes.append(lb)
        prep = time.perf_counter()
        out = reader._run(blob, second=second)
        looks = [_look(reader, out[row], floor) for row in range(len(members))]
        # a first look at small dice is read again larger: no mirror look at it
        ahead = [
            small is not None and _small(reader, look, loaded[i][0], boxes[row])
            for row, (i, look) in enumerate(zip(members, looks, strict=True))
        ]
        doubted = [None if a else look for a, look in zip(ahead, looks, strict=True)]
        flipped = _mirror_looks(reader, blob, doubted, expected, second=second)
        for row, i in enumerate(members):
            views = (looks[row], flipped[row], tw)
            readings[i], wants = _decode(
                reader,
                views,
                loaded[i][0],
                boxes[row],
                expected,
                first=small is not None,
                small=ahead[row],
            )
            if small is not None:
                small[i] = wants
        for i in members:
            own[i] += (prep - t0) / len(members)
        shared += time.perf_counter() - prep
    return shared


def _faint(reader: LookReader) -> float:
    """The confidence from which boxes judge the second look (and the mirror look doubts)."""
    return min(reader.second_look_conf, reader.conf)


def _floor(reader: LookReader, expected: int | None) -> float:
    """The lowest confidence of a box decoded (faint boxes judge the second look, fill a dice
    count, or join the dice when the die check and the face classifier are sure of them)."""
    faint = _faint(reader)
    if expected is not None and reader.fit_count:
        return min(faint, reader.fit_conf) if reader.verify is not None else faint
    return faint if reader.sure_faint is None else min(faint, reader.sure_faint.conf)


def _look(reader: LookReader, pred: NDArray[np.float32], floor: float) -> Look:
    """The look (:mod:`vision.looks`) of one photo's detector output, from ``floor`` up."""
    return decode_look(
        pred,
        reader.roles,
        end2end=reader.end2end,
        floor=floor,
        iou=reader.iou,
        max_det=reader.max_det,
    )


def _mirror_looks(
    reader: LookReader,
    blob: NDArray[np.float32],
    looks: Sequence[Look | None],
    expected: int | None,
    *,
    second: bool,
) -> list[NDArray[np.float32] | None]:
    """The detector's output for the mirror image of each photo of ``blob`` whose first
    look (``looks``: its boxes, confidences, values, cocked flags) holds a die the mirror
    look could drop, else None.

    The mirror look can only halve a box's confidence (:func:`vision.fusion.second_opinion`),
    so a photo whose dice are all at least twice the reader's ``conf`` sure is read once.
    """
    if not reader.mirror or (expected is not None and reader.fit_count):
        return [None] * len(looks)  # told the count, fitting it judges the doubtful boxes
    rows = [r for r, look in enumerate(looks) if look is not None and doubtful(look, reader.conf)]
    run = partial(reader._run, second=second)
    return mirror_outputs(run, blob, rows, len(looks), fixed_batch=reader.fixed_batch)


def _small(
    reader: LookReader, look: Look, img: LoadedImage, lb: Letterbox, sides: NDArray | None = None
) -> bool:
    """Whether a look at photo ``img`` (letterboxed as ``lb``) finds its dice small enough
    for a second look: every box from the second look's faint confidence up counts. A look
    that finds no box at all takes the second look too: a photo of a roll holds dice, and
    those the first look cannot see at all are most often too small for it.
    ``sides``: the boxes' longer sides in the photo's pixels, when already known."""
    if reader.second_look is None:
        return False
    faint = _faint(reader)
    if sides is None:
        _, sides = photo_boxes(look[0], lb, img)
    seen = sides[look[1] >= faint].tolist()
    if not seen:
        return True
    return small_dice(
        seen,
        img.width,
        img.height,
        size=max(reader.imgsz),
        below=reader.second_look_below,
    )


def _decode(
    reader: LookReader,
    views: tuple[Look, NDArray[np.float32] | None, int],
    img: LoadedImage,
    lb: Letterbox,
    expected: int | None,
    *,
    first: bool = False,
    small: bool = False,
) -> tuple[Reading, bool]:
    """The reading of one photo from a look of the detector (``views``: its decoded
    boxes, the mirror image's raw output or None, and the input's width), and whether the
    photo wants a second look: judged on every box the detector found, before the die
    check, since the things it drops (often far dice taken for something else) are small
    too. A ``first`` look at a photo that wants a second look gives an empty reading: the
    second look's replaces it, so its dice are not checked and read for nothing. ``small``:
    that judgement of the first look before the mirror look, judged again after one."""
    look, flipped, width = views
    fit = expected is not None and reader.fit_count
    floor = _floor(reader, expected)
    if flipped is not None:  # the mirror look only doubts boxes: its own from half the faint bar
        mirror = _look(reader, flipped, _faint(reader) / 2)
        look = with_mirror_look(
            look, mirror, width, floor=floor, iou=reader.iou, max_det=reader.max_det
        )
    _, conf, values, cocked = look
    boxes, sides = photo_boxes(look[0], lb, img)  # in the decoded photo's pixels
    if first and flipped is not None:  # the mirror look may have changed the boxes
        small = _small(reader, look, img, lb, sides)
    if first and small:
        return Reading(img.width, img.height, [], image=img.name, expected_dice=expected), True
    dice, added, dropped = photo_dice(
        img, (boxes, conf, values, cocked), reader, expected=expected if fit else None
    )
    reading = Reading(
        width=img.width,
        height=img.height,
        dice=dice,
        image=img.name,
        expected_dice=expected,
        added=added,
        dropped=dropped,
    )
    return reading, False
