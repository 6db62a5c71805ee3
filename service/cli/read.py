"""``dicecam read``: read the dice in photos.

    dicecam read roll.jpg                       # readable summary
    dicecam read --json photos/*.jpg            # one JSON object per photo per line
    dicecam read --annotate out/ roll.jpg       # also write the photo with boxes and values

A photo that cannot be read prints an error (a JSON line with "error" under ``--json``, and a
line on stderr) and the others are still read; the exit status is then 1.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from service.cli import UsageError
from service.cli._reader_options import add_reader_options, open_reader

__all__ = ["register", "run"]

ANNOTATE_SIDE = 2048
"""With ``--annotate``, photos decode with at least this longer side (a reading alone may decode a
large JPEG smaller): the annotated copies keep a photo's detail up to about 4 megapixels."""


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "read",
        help="read the dice in photos",
        description="Read every die in each photo: top value, box and confidence.",
    )
    p.add_argument(
        "photos",
        nargs="+",
        metavar="PHOTO",
        help="image files (or folders: every photo under them)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object per photo per line")
    p.add_argument("--annotate", metavar="OUT/", type=Path, help="write annotated photos here")
    p.add_argument("--model", metavar="PATH", help="ONNX reader model (default: DICECAM_MODEL)")
    p.add_argument(
        "--expect",
        metavar="N",
        type=int,
        help="how many dice were rolled: fewer found are missing, and the reader keeps the N "
        "likeliest dice or adds faint ones to reach N (DICECAM_FIT_COUNT=0: it does not)",
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


def _summary(reading) -> str:
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
    text = f"{reading.image}: " + ", ".join(parts)
    if reading.latency_ms is not None:
        text += f"  ({reading.latency_ms:.1f} ms)"
    return text


def run(args: argparse.Namespace) -> int:
    from vision.io import ImageError, load_image

    if args.expect is not None and args.expect < 1:
        raise UsageError(f"--expect must be a positive number of dice, got {args.expect}")
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
    for photo in _expand(args.photos):
        t0 = time.perf_counter()
        if Path(photo).is_dir():
            failed += 1
            print(f"dicecam read: no photos in the folder {photo} (nor under it)", file=sys.stderr)
            if args.json:
                print(json.dumps({"image": photo, "error": "no photos in the folder"}), flush=True)
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
            failed += 1
            said = str(exc) if str(photo) in str(exc) else f"{photo}: {exc}"  # name it once
            print(f"dicecam read: {said}", file=sys.stderr)
            if args.json:
                print(json.dumps({"image": photo, "error": str(exc)}), flush=True)
            continue
        reading.latency_ms = (time.perf_counter() - t0) * 1000
        reading.image = photo
        if args.json:
            print(json.dumps(reading.to_dict()), flush=True)
        else:
            print(_summary(reading), flush=True)
        if args.annotate is not None:
            from vision.annotate import save_annotated

            out = _annotated_path(args.annotate, photo, used)
            try:
                save_annotated(loaded.bgr, reading, out)
            except (OSError, ValueError) as exc:
                failed += 1
                print(f"dicecam read: {photo}: cannot write {out}: {exc}", file=sys.stderr)
    return 1 if failed else 0
