"""``dicecam read``: read the dice in photos and videos.

    dicecam read roll.jpg                       # readable summary
    dicecam read --json photos/*.jpg            # one JSON object per photo per line
    dicecam read --annotate out/ roll.jpg       # also write the photo with boxes and values
    dicecam read roll.mp4                       # each roll of a clip, once its dice are at rest
    dicecam read --camera 0                     # ... of a webcam, until Ctrl-C

A photo or video that cannot be read prints an error (a JSON line with "error" under ``--json``,
and a line on stderr) and the others are still read; the exit status is then 1.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from service.cli import UsageError, given_path
from service.cli._reader_options import add_reader_options, open_reader

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from vision.reader import DiceReader
    from vision.types import Reading

__all__ = ["register", "run"]

ANNOTATE_SIDE = 2048
"""With ``--annotate``, photos decode with at least this longer side (a reading alone may decode a
large JPEG smaller): the annotated copies keep a photo's detail up to about 4 megapixels."""


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "read",
        help="read the dice in photos and videos",
        description="Read every die in each photo: top value, box and confidence. A video "
        "(roll.mp4) gives each roll once, when its dice have come to rest.",
    )
    p.add_argument(
        "photos",
        nargs="*",
        type=given_path,
        metavar="PHOTO",
        help="image or video files (or folders: every photo under them)",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print one JSON object per photo (per settled roll of a video) per line",
    )
    p.add_argument(
        "--annotate",
        metavar="OUT/",
        type=Path,
        help="write annotated photos here (of a video: each settled roll's frame)",
    )
    p.add_argument(
        "--model",
        metavar="PATH",
        type=given_path,
        help="reader model (.onnx), e.g. a fine-tuned runs/finetune/NAME-ft.onnx, with the "
        "models beside it (default: DICECAM_MODEL, else the shipped one)",
    )
    p.add_argument(
        "--expect",
        metavar="N",
        type=int,
        help="how many dice were rolled: fewer found are missing, and the reader keeps the N "
        "likeliest dice or adds faint ones to reach N (DICECAM_FIT_COUNT=0: it does not)",
    )
    p.add_argument(
        "--camera",
        metavar="INDEX",
        type=int,
        help="also read the rolls of a webcam (0: the first) as they settle, until Ctrl-C",
    )
    p.add_argument(
        "--every-ms",
        metavar="MS",
        type=float,
        default=100.0,
        help="of a video or camera, read a frame every MS milliseconds (default: 100)",
    )
    p.add_argument(
        "--settle-ms",
        metavar="MS",
        type=float,
        default=500.0,
        help="dice whose reading holds this long are at rest: a roll (default: 500)",
    )
    add_reader_options(p)
    p.set_defaults(func=run)


def _expand(photos: list[str]) -> list[str]:
    """The photos named, a folder standing for every photo under it (subfolders too, as
    ``dicecam label`` takes them); a folder without any stays, to be reported."""
    from vision.labelling import find_photos

    out: list[str] = []
    for photo in photos:
        path = Path(photo)
        if path.is_dir():
            out += [str(p) for p in find_photos(path)] or [photo]
        else:
            out.append(photo)
    return out


def _annotated_path(out_dir: Path, photo: str, used: set[Path]) -> Path:
    src = Path(photo)
    suffix = src.suffix.lower() if src.suffix.lower() in {".jpg", ".jpeg", ".png"} else ".jpg"
    path = out_dir / f"{src.stem}{suffix}"
    n = 1
    while path in used:
        path = out_dir / f"{src.stem}_{n}{suffix}"
        n += 1
    used.add(path)
    return path


def _check_annotate(out: Path, photos: list[str]) -> None:
    """UsageError when an annotated copy written into ``out`` would replace one of ``photos``
    (``--annotate`` naming the photos' own folder, or ``--annotate ''``: the current one)."""
    inputs = {Path(photo).resolve() for photo in photos}
    used: set[Path] = set()
    for photo in photos:
        path = _annotated_path(out, photo, used)
        if path.resolve() in inputs:
            raise UsageError(
                f"--annotate: expected a folder other than the photos' own, got {out} "
                f"(the annotated copy of {photo} would replace the photo {path})"
            )


def _annotate(
    bgr: NDArray[np.uint8], reading: Reading, name: str, file_name: str, out: Path, used: set[Path]
) -> bool:
    """Write ``bgr`` with ``reading`` drawn on it into ``out`` under ``file_name`` (made unique
    among ``used``); False, said on stderr, when it cannot be written."""
    from vision.annotate import save_annotated

    path = _annotated_path(out, file_name, used)
    try:
        save_annotated(bgr, reading, path)
    except (OSError, ValueError) as exc:
        print(f"dicecam read: {name}: cannot write {path}: {exc}", file=sys.stderr)
        return False
    return True


def _failed(args: argparse.Namespace, name: str | int, said: str, error: str) -> int:
    """Say that ``name`` could not be read (``said`` on stderr; ``error`` in a JSON line under
    ``--json``); 1, a failure to count."""
    print(f"dicecam read: {said}", file=sys.stderr)
    if args.json:
        print(json.dumps({"image": name, "error": error}), flush=True)
    return 1


def _summary(reading: Reading, label: str | None = None) -> str:
    dice = reading.dice
    parts = [f"{len(dice)} {'die' if len(dice) == 1 else 'dice'}"]
    if reading.values:
        parts.append("values " + " ".join(map(str, reading.values)))
    if reading.off_table:
        parts.append(f"{reading.off_table} off the table")
    if reading.cocked:
        parts.append(f"{reading.cocked} cocked")
    if reading.unsure:
        unsure = sorted((d for d in reading.dice if d.unsure), key=lambda d: d.box[0])
        parts.append(f"unsure of {' '.join(f'{d.value}?' for d in unsure)}: check")
    if reading.missing:
        parts.append(f"{reading.missing} missing")
    if reading.added:
        parts.append(f"{reading.added} faint added to make {reading.expected_dice}")
    faint = sum(d.faint for d in dice) - reading.added  # found faintly without a count
    if faint > 0:
        parts.append(f"{faint} faint: check")
    if reading.dropped:
        parts.append(f"{reading.dropped} more left out")
    if reading.bust:
        parts.append("BUST")
    text = f"{label or reading.image}: " + ", ".join(parts)
    if reading.latency_ms is not None:
        text += f"  ({reading.latency_ms:.1f} ms)"
    if reading.outline_note:  # a stored calibration left out: the player should know why
        text += f"\n  note: {reading.outline_note}"
    return text


def run(args: argparse.Namespace) -> int:
    from vision.io import ImageError, load_image
    from vision.video import VIDEO_SUFFIXES, VideoError, VideoInfo

    if args.expect is not None and args.expect < 1:
        raise UsageError(f"--expect must be a positive number of dice, got {args.expect}")
    if not args.photos and args.camera is None:
        raise UsageError(  # as argparse says it of a missing argument
            "the following arguments are required: PHOTO, or --camera INDEX "
            "(see dicecam read --help)"
        )
    for option in ("every_ms", "settle_ms"):
        if not getattr(args, option) > 0:
            raise UsageError(
                f"--{option.replace('_', '-')} must be above 0, got {getattr(args, option)}"
            )
    if args.camera is not None:  # before the reader loads: a camera not there is said at once
        try:
            VideoInfo.from_video_path(args.camera)
        except VideoError as exc:
            raise UsageError(str(exc)) from None
    photos = _expand(args.photos)
    if args.annotate is not None:
        _check_annotate(args.annotate, photos)
    reader = open_reader(args)  # checks its options before the --annotate folder is made
    if args.annotate is not None:
        if args.annotate.exists() and not args.annotate.is_dir():
            raise UsageError(f"--annotate expects a folder, got an existing file: {args.annotate}")
        try:
            args.annotate.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot create --annotate folder {args.annotate}: {exc}") from None

    failed = 0
    used: set[Path] = set()
    side = reader.decode_side if args.annotate is None else max(reader.decode_side, ANNOTATE_SIDE)
    for photo in photos:
        t0 = time.perf_counter()
        if Path(photo).is_dir():
            said = f"no photos in the folder {photo} (nor under it)"
            failed += _failed(args, photo, said, "no photos in the folder")
            continue
        if Path(photo).suffix.lower() in VIDEO_SUFFIXES:
            failed += _read_video(reader, photo, args, used)
            continue
        try:
            loaded = load_image(
                photo,
                min_long_side=side,
                max_image_pixels=reader.settings.max_image_pixels,
                max_decoded_pixels=reader.settings.max_decoded_pixels,
            )
            reading = reader.read(loaded, expected_dice=args.expect)
        except ImageError as exc:
            if _video_after_all(photo):  # `dicecam read clip` with no or an odd suffix
                failed += _read_video(reader, photo, args, used)
                continue
            said = str(exc) if str(photo) in str(exc) else f"{photo}: {exc}"  # name it once
            failed += _failed(args, photo, said, str(exc))
            continue
        reading.latency_ms = (time.perf_counter() - t0) * 1000
        reading.image = photo
        if args.json:
            print(json.dumps(reading.to_dict()), flush=True)
        else:
            print(_summary(reading), flush=True)
        annotated = args.annotate is None or _annotate(
            loaded.bgr, reading, photo, photo, args.annotate, used
        )
        failed += 0 if annotated else 1
    if args.camera is not None:
        failed += _read_video(reader, args.camera, args, used)  # until Ctrl-C
    return 1 if failed else 0


def _video_after_all(path: str) -> bool:
    """Whether a file that is not an image, and not named as one, opens as a video."""
    from vision.io import IMAGE_SUFFIXES
    from vision.video import VideoError, VideoInfo

    if Path(path).suffix.lower() in IMAGE_SUFFIXES:
        return False
    try:
        VideoInfo.from_video_path(path)
    except VideoError:
        return False
    return True


def _read_video(
    reader: DiceReader, source: str | int, args: argparse.Namespace, used: set[Path]
) -> int:
    """Print each settled roll of a video file or camera (:func:`vision.settled_rolls`) and write
    its frame annotated; 1 when the video cannot be read (after the rolls found before), else 0."""
    from vision.video import VideoError, settled_rolls

    name = f"camera {source}" if isinstance(source, int) else source
    rolls = settled_rolls(
        reader,
        source,
        every_s=args.every_ms / 1000,
        settle_s=args.settle_ms / 1000,
        expected_dice=args.expect,
    )
    found = failed = 0
    try:
        for roll in rolls:
            found += 1
            if args.json:
                print(json.dumps(roll.to_dict()), flush=True)
            else:
                label = f"{name} at {roll.time_s:.2f} s (frame {roll.frame})"
                print(_summary(roll.reading, label), flush=True)
            if args.annotate is not None:
                frame = f"{Path(name).stem.replace(' ', '')}-frame{roll.frame:06d}.jpg"
                if not _annotate(roll.bgr, roll.reading, name, frame, args.annotate, used):
                    failed = 1
    except VideoError as exc:
        return _failed(args, name, str(exc), str(exc))
    if not found:
        note = f"{name}: no roll came to rest (dice still for {args.settle_ms:g} ms)"
        print(note, file=sys.stderr if args.json else sys.stdout, flush=True)
    return failed
