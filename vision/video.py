"""Videos in, settled rolls out: a clip of a roll (a phone's ``roll.mp4``) or a webcam, read at a
sampled frame every ``every_s`` seconds, and each roll reported once, when its dice came to rest.

The dice are at rest when the reading holds (the same dice, values and box centres) over
``settle_s`` seconds of sampled frames; a roll is reported at the first frame of that still
stretch. The dice picked up and thrown again make a new roll; the same dice found again where they
were (a hand passed over them) do not.

Frames are decoded by OpenCV (its FFmpeg build reads MP4, MOV, AVI, MKV, WebM, ...); nothing is
downloaded. A file that is not a video, an empty or truncated one raises :class:`VideoError`
naming it. FFmpeg's own messages are silenced (``OPENCV_FFMPEG_LOGLEVEL``, unless set): every
failure is raised instead.

Example (not run: no clip is committed: tests/vision/test_video.py writes one):
    >>> from vision import DiceReader, settled_rolls
    >>> for roll in settled_rolls(DiceReader(), "roll.mp4"):  # doctest: +SKIP
    ...     print(roll.frame, roll.time_s, roll.reading.values)
    42 1.4 [2, 3, 3, 5, 6]
"""

from __future__ import annotations

import math
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from vision.boxes import box_centre, box_side
from vision.matching import match_dice
from vision.types import Reading

if TYPE_CHECKING:
    import cv2
    from numpy.typing import NDArray

    from vision.reader import DiceReader

__all__ = [
    "VIDEO_SUFFIXES",
    "SettledRoll",
    "VideoError",
    "VideoFrame",
    "VideoInfo",
    "same_roll",
    "settled_rolls",
    "video_frames",
]

VIDEO_SUFFIXES = frozenset(
    {".mp4", ".m4v", ".mov", ".avi", ".mkv", ".webm", ".mpg", ".mpeg", ".wmv", ".3gp", ".mjpeg"}
)
"""File suffixes (lower case) that ``dicecam read`` takes for videos."""

VideoSource = str | os.PathLike | int
"""A video file, or the index of a camera (0: the first webcam)."""

STILL_TOLERANCE = 0.25
"""How far a die's box centre may move, in die sizes, and the die still be at rest."""
STILL_MIN_PX = 3.0
"""... and at least this many pixels (compression moves a box by a pixel or two)."""
_SHORT_OF = 1
"""Frames a video may end short of the count its header declares (an estimate in some
containers) before it is called truncated."""


class VideoError(ValueError):
    """The input is not a video dicecam can read (missing, empty, not a video, truncated), or no
    camera opens at the index given."""


@dataclass(frozen=True, slots=True)
class VideoInfo:
    """A video's frame size, frame rate and frame count (0: not known, as for a camera)."""

    width: int
    height: int
    fps: float
    total_frames: int

    @classmethod
    def from_video_path(cls, source: VideoSource) -> VideoInfo:
        """Read the header of a video file (or ask a camera).

        Raises:
            VideoError: see :func:`video_frames`.
        """
        cap, _ = _open(source)
        try:
            return _info(cap)
        finally:
            cap.release()

    @property
    def duration_s(self) -> float | None:
        """The length in seconds, when the frame rate and count are known."""
        return self.total_frames / self.fps if self.fps > 0 and self.total_frames > 0 else None


@dataclass(slots=True)
class VideoFrame:
    """One decoded frame: its index in the video (counting every frame, read or skipped), its
    time in seconds from the start, and its pixels (BGR, OpenCV's order)."""

    index: int
    time_s: float
    bgr: NDArray[np.uint8]


@dataclass(slots=True)
class SettledRoll:
    """A roll at rest: the reading of the first frame of its still stretch, that frame's index and
    time, its pixels, and how long the dice were seen still (``held_s``, at least ``settle_s``)."""

    reading: Reading
    frame: int
    time_s: float
    bgr: NDArray[np.uint8]
    held_s: float

    def to_dict(self) -> dict[str, Any]:
        """A photo's reading (:meth:`Reading.to_dict`) with ``frame`` and ``time_s`` after
        ``image``."""
        d = self.reading.to_dict()
        return {"image": d.pop("image"), "frame": self.frame, "time_s": round(self.time_s, 3), **d}


def video_frames(
    source: VideoSource, *, stride: int = 1, every_s: float | None = None
) -> Iterator[VideoFrame]:
    """Decode the frames of a video file or camera, every ``stride``-th one, or (``every_s``) the
    first frame at or after each multiple of ``every_s`` seconds. Frames skipped are grabbed, not
    converted. A camera is read until the caller stops (Ctrl-C); its times are the clock's.

    Raises:
        VideoError: a missing or empty file, one OpenCV cannot open as a video, one in which no
            frame decodes or that ends short of the frames its header declares (truncated: after
            the frames that did decode), a camera that does not open or stops giving frames.
        ValueError: ``stride`` under 1 or ``every_s`` not above 0.
    """
    if stride < 1:
        raise ValueError(f"expected a stride of 1 or more, got {stride}")
    if every_s is not None and not every_s > 0:
        raise ValueError(f"expected every_s above 0 seconds, got {every_s}")
    import cv2

    cap, name = _open(source)
    try:
        info = _info(cap)
        camera = isinstance(source, int)
        fps = info.fps if 0 < info.fps < 1000 else 0.0  # a header may hold nonsense
        start = time.monotonic()
        due = 0.0
        index = -1
        while True:
            if not cap.grab():
                break
            index += 1
            if camera:
                t = time.monotonic() - start
            elif fps:
                t = index / fps
            else:
                t = cap.get(cv2.CAP_PROP_POS_MSEC) / 1000
            if every_s is not None:
                if t < due - 1e-6:
                    continue
                due = (math.floor(t / every_s + 1e-6) + 1) * every_s
            elif index % stride:
                continue
            ok, bgr = cap.retrieve()
            if not ok or bgr is None:
                break
            yield VideoFrame(index, t, bgr)
        read = index + 1
        if camera:
            raise VideoError(f"{name} stopped giving frames after {read}")
        if read == 0 and info.total_frames:
            raise VideoError(
                f"{name}: no frame decodes, of the {info.total_frames} its header declares "
                "(truncated or corrupt)"
            )
        if read == 0:
            raise VideoError(f"{name}: no frame decodes (an empty, truncated or corrupt video)")
        if info.total_frames - read > _SHORT_OF:
            raise VideoError(
                f"{name}: the video stops at frame {read} of the {info.total_frames} its header "
                "declares (truncated or corrupt)"
            )
    finally:
        cap.release()


def same_roll(a: Reading, b: Reading) -> bool:
    """Whether two readings show the same dice at rest: as many dice, each matched by box centre
    (:func:`vision.match_dice`) to one within :data:`STILL_TOLERANCE` die sizes (and
    :data:`STILL_MIN_PX`), showing the same value, on or off the table and cocked alike.

    Example:
        >>> from vision.types import Die
        >>> a = Reading(640, 480, [Die(5, (100, 100, 140, 140), 0.9)])
        >>> same_roll(a, Reading(640, 480, [Die(5, (102, 101, 142, 141), 0.8)]))
        True
        >>> same_roll(a, Reading(640, 480, [Die(5, (120, 100, 160, 140), 0.9)]))
        False
    """
    if len(a.dice) != len(b.dice):
        return False
    pairs = match_dice([d.box for d in a.dice], [d.box for d in b.dice])
    if len(pairs) != len(a.dice):
        return False
    for i, j in pairs:
        da, db = a.dice[i], b.dice[j]
        if (da.value, da.on_table, da.cocked) != (db.value, db.on_table, db.cocked):
            return False
        side = (box_side(da.box) + box_side(db.box)) / 2
        if math.dist(box_centre(da.box), box_centre(db.box)) > max(
            STILL_MIN_PX, STILL_TOLERANCE * side
        ):
            return False
    return True


def settled_rolls(
    reader: DiceReader,
    source: VideoSource,
    *,
    every_s: float = 0.1,
    settle_s: float = 0.5,
    expected_dice: int | None = None,
) -> Iterator[SettledRoll]:
    """Each roll of a video or camera once, as its dice come to rest: a frame is read every
    ``every_s`` seconds, and a reading with dice that holds (:func:`same_roll`) for ``settle_s``
    seconds, over two sampled frames at least, is a roll, unless it is the roll reported last
    (the same dice where they were). ``expected_dice`` goes to :meth:`DiceReader.read`.

    Each reading's ``image`` is the file's name (``camera 0`` for a camera). Rolls come as they
    are found: a camera's until the caller stops.

    Raises:
        VideoError: see :func:`video_frames`, or frames larger than the reader's
            ``max_decoded_pixels`` (after the rolls found before, for a truncated video).
        ValueError: ``every_s`` or ``settle_s`` not above 0.
    """
    if not settle_s > 0:
        raise ValueError(f"expected settle_s above 0 seconds, got {settle_s}")
    name = _name(source)
    still: tuple[VideoFrame, Reading] | None = None  # the first frame of the still stretch
    taken = False  # the still stretch was reported (or was the roll reported last)
    last: Reading | None = None
    limit = reader.settings.max_decoded_pixels
    for frame in video_frames(source, every_s=every_s):
        h, w = frame.bgr.shape[:2]
        if w * h > limit:
            raise VideoError(
                f"{name}: frames of {w}x{h} pixels, over the {limit} a reading may decode "
                "(DICECAM_MAX_DECODED_PIXELS)"
            )
        reading = reader.read(frame.bgr, expected_dice=expected_dice)
        reading.image = name
        if still is None or not same_roll(still[1], reading):
            still, taken = (frame, reading), False
            continue
        first, first_reading = still
        held = frame.time_s - first.time_s
        if taken or not first_reading.dice or held < settle_s - 1e-6:
            continue
        taken = True
        if last is not None and same_roll(last, first_reading):
            continue
        last = first_reading
        yield SettledRoll(first_reading, first.index, first.time_s, first.bgr, held)


def _name(source: VideoSource) -> str:
    return f"camera {source}" if isinstance(source, int) else str(source)


@contextmanager
def _quiet() -> Iterator[None]:
    """OpenCV's warnings off while a video opens: the error raised says what went wrong."""
    import cv2

    os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")  # AV_LOG_QUIET, read at FFmpeg's start
    level = cv2.utils.logging.getLogLevel()
    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)
    try:
        yield
    finally:
        cv2.utils.logging.setLogLevel(level)


def _open(source: VideoSource) -> tuple[cv2.VideoCapture, str]:
    import cv2

    name = _name(source)
    if isinstance(source, bool) or not isinstance(source, (str, os.PathLike, int)):
        raise VideoError(
            f"expected a video file or a camera index, got {type(source).__qualname__}"
        )
    if isinstance(source, int):
        if source < 0:
            raise VideoError(f"expected a camera index of 0 or more, got {source}")
        with _quiet():
            cap = cv2.VideoCapture(source)
        if not cap.isOpened():
            raise VideoError(f"no camera opens at index {source}")
        return cap, name
    path = Path(source)
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise VideoError(f"no such file: {path}") from None
    except OSError as exc:
        raise VideoError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not path.is_file():  # a folder, or a pipe or device that could block
        raise VideoError(
            f"expected a video file, got {'a directory' if path.is_dir() else 'a pipe or device'}"
            f": {path}"
        )
    if size == 0:
        raise VideoError(f"empty file: {path} (0 bytes)")
    with _quiet(), _opencv_name(path) as opened_as:
        cap = cv2.VideoCapture(opened_as)
    if not cap.isOpened():
        raise VideoError(
            f"{path}: not a video OpenCV can open (expected MP4, MOV, AVI, MKV, WebM, ...; "
            "or a truncated or corrupt one)"
        )
    return cap, name


@contextmanager
def _opencv_name(path: Path) -> Iterator[str]:
    """A name OpenCV opens ``path`` by: its own, or for a name that is not UTF-8 (Latin-1 bytes,
    which OpenCV's Python binding crashes on) a link to it with a plain name, kept while the video
    opens (FFmpeg holds the file open after)."""
    name = str(path)
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        yield name
        return
    suffix = path.suffix if path.suffix.isascii() else ""
    with tempfile.TemporaryDirectory(prefix="dicecam-video-") as tmp:
        link = Path(tmp) / f"video{suffix}"
        try:
            link.symlink_to(path.resolve())
        except OSError as exc:
            raise VideoError(
                f"{path}: OpenCV opens no file whose name is not UTF-8, and no link to it could "
                f"be made ({exc.strerror or exc}): rename it"
            ) from None
        yield str(link)


def _info(cap: cv2.VideoCapture) -> VideoInfo:
    import cv2

    count = cap.get(cv2.CAP_PROP_FRAME_COUNT)
    return VideoInfo(
        width=int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)),
        height=int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT)),
        fps=float(cap.get(cv2.CAP_PROP_FPS) or 0.0),
        total_frames=int(count) if count > 0 else 0,
    )
