"""``dicecam synth``: render a synthetic YOLO dataset of dice rolls, or a labelled preview sheet."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from service.cli import UsageError

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "synth",
        help="render synthetic dice rolls with exact labels (YOLO dataset or preview sheet)",
        description=(
            "Throw dice in a physics simulation and render photos of them. Writes DIR/images, "
            "DIR/labels (YOLO: classes 0-5 = faces 1-6, 6 = cocked), DIR/meta (JSON per image) "
            "and DIR/data.yaml (--out DIR). --preview draws a labelled contact sheet of the same "
            "images, with or without --out (with it, the first 16). A run stopped part way "
            "(Ctrl-C, a full disk) leaves the images written so far, each whole beside its "
            "labels; the same command writes the set again (--start I goes on from image I)."
        ),
    )
    p.add_argument(
        "--n", type=int, default=None, help="number of images (default 1000, or 16 for --preview)"
    )
    p.add_argument("--out", type=Path, metavar="DIR", help="dataset folder to write")
    p.add_argument(
        "--seed", type=int, default=0, help="stream seed: same seed, same images (default 0)"
    )
    p.add_argument(
        "--start",
        type=int,
        default=0,
        metavar="I",
        help="first image index of the stream (default 0)",
    )
    p.add_argument(
        "--workers", type=int, default=1, metavar="N", help="processes to render with (default 1)"
    )
    p.add_argument(
        "--val-fraction",
        type=float,
        default=0.1,
        metavar="P",
        help="share of images in val/, 0 or more and under 1 (default 0.1)",
    )
    p.add_argument(
        "--size",
        type=int,
        nargs=2,
        metavar=("W", "H"),
        default=(640, 640),
        help="image size (default 640 640)",
    )
    p.add_argument(
        "--preview",
        type=Path,
        metavar="SHEET.png",
        help="write a labelled contact sheet of images of the stream, drawn with the same "
        "options (--seed, --start, --size, --face-kind, ...)",
    )
    p.add_argument("--cols", type=int, default=4, help="columns of the preview sheet (default 4)")
    p.add_argument(
        "--tile", type=int, default=320, help="width of each preview tile in pixels (default 320)"
    )
    p.add_argument(
        "--face-kind",
        choices=("pips", "numeral", "emblem"),
        help="mark every die's faces this way (default: mostly pips, 8%% numerals, 8%% emblems)",
    )
    p.add_argument(
        "--lean-share",
        type=float,
        default=None,
        metavar="P",
        help="share of scenes with one more die leaning on a neighbour or a rim, a cocked die "
        "(default 0.3)",
    )
    p.add_argument(
        "--pieces-share",
        type=float,
        default=None,
        metavar="P",
        help="share of scenes with game pieces (pawns, blocks, houses, discs) standing on the "
        "table, never labelled (default 0)",
    )
    p.add_argument(
        "--elevation",
        type=float,
        nargs=2,
        default=None,
        metavar=("LO", "HI"),
        help="camera elevation range in degrees, 90 looking straight down (default: 62-90 for "
        "55%% of scenes, 25-62 for the rest; trays and boxes keep at least 45-70)",
    )
    p.add_argument(
        "--wide-styles",
        type=float,
        default=None,
        metavar="P",
        help="share of scenes whose dice take any body colour, pips of any hue and size, "
        "pale on pale too (default 0)",
    )
    p.add_argument(
        "--stone-share",
        type=float,
        default=None,
        metavar="P",
        help="share of scenes whose table top is stone: granite or terrazzo, grains the size "
        "of pips (default 0)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.out is None and args.preview is None:
        raise UsageError("say where to write: --out DIR (a dataset) and/or --preview SHEET.png")
    if args.n is not None and args.n < 1:
        raise UsageError(f"--n must be at least 1, got {args.n}")
    if args.workers < 1:
        raise UsageError(f"--workers must be at least 1, got {args.workers}")
    if not 0.0 <= args.val_fraction < 1.0:
        raise UsageError(f"--val-fraction must be in [0, 1), got {args.val_fraction}")
    w, h = args.size
    if not (64 <= w <= 4096 and 64 <= h <= 4096):
        raise UsageError(f"--size must be between 64 and 4096 pixels a side, got {w} {h}")
    shares = (
        ("--lean-share", args.lean_share),
        ("--pieces-share", args.pieces_share),
        ("--wide-styles", args.wide_styles),
        ("--stone-share", args.stone_share),
    )
    for flag, share in shares:
        if share is not None and not 0.0 <= share <= 1.0:
            raise UsageError(f"{flag} must be between 0 and 1, got {share}")
    if args.elevation is not None and not 5 <= args.elevation[0] <= args.elevation[1] <= 90:
        lo, hi = args.elevation
        raise UsageError(
            f"--elevation must be LO HI with 5 <= LO <= HI <= 90 degrees, got {lo} {hi}"
        )
    if args.start < 0:
        raise UsageError(f"--start must be 0 or more, got {args.start}")
    if args.seed < 0:
        raise UsageError(f"--seed must be 0 or more, got {args.seed}")
    if not 64 <= args.tile <= 2048:
        raise UsageError(f"--tile must be between 64 and 2048 pixels, got {args.tile}")
    if args.cols < 1:
        raise UsageError(f"--cols must be at least 1, got {args.cols}")
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        raise UsageError(f"--out must be a folder, but {args.out} is a file")
    if args.preview is not None:
        if args.preview.suffix.lower() not in (".png", ".jpg", ".jpeg"):
            raise UsageError(f"--preview must end in .png or .jpg, got {args.preview.name}")
        if not args.preview.parent.is_dir():
            raise UsageError(f"--preview folder does not exist: {args.preview.parent}")

    import cv2

    from vision.atomic import atomic_write
    from vision.synth import preview_sheet, write_dataset

    options = {  # the scene options, for the dataset and the preview alike
        k: v
        for k, v in (
            ("face_kind", args.face_kind),
            ("lean_share", args.lean_share),
            ("pieces_share", args.pieces_share),
            ("elevation_range", None if args.elevation is None else tuple(args.elevation)),
            ("wide_styles", args.wide_styles),
            ("stone_share", args.stone_share),
        )
        if v is not None
    }
    if args.preview is not None:
        n = args.n if args.out is None and args.n is not None else 16
        sheet = preview_sheet(
            seed=args.seed,
            n=n,
            cols=args.cols,
            size=(w, h),
            tile=args.tile,
            start=args.start,
            **options,
        )
        ok, data = cv2.imencode(args.preview.suffix.lower(), sheet)
        if not ok:
            raise UsageError(f"could not encode the preview as {args.preview.suffix}")
        atomic_write(args.preview, data.tobytes())  # a full disk: one line, no half a sheet
        print(f"wrote preview of {n} samples to {args.preview}")
    if args.out is not None:
        from vision.labelling.progress import ProgressBar

        n = args.n if args.n is not None else 1000
        _say_rewritten(args.out, n, args.seed, args.start, args.val_fraction)
        # redrawn on a terminal; a line a tenth of the run in a log
        bar = None if args.quiet else ProgressBar(n, desc="synth", stream=sys.stderr)
        s = write_dataset(
            args.out,
            n,
            seed=args.seed,
            workers=args.workers,
            val_fraction=args.val_fraction,
            size=(w, h),
            start=args.start,
            progress=None if bar is None else lambda done, total: bar.update(done),
            face_kind=args.face_kind,
            lean_share=args.lean_share,
            pieces_share=args.pieces_share,
            elevation=None if args.elevation is None else tuple(args.elevation),
            wide_styles=args.wide_styles,
            stone_share=args.stone_share,
        )
        states = ", ".join(f"{k} {v}" for k, v in s.states.items())
        print(
            f"wrote {s.images} images ({s.train} train, {s.val} val), {s.dice} dice, {s.labelled} labelled ({states}) to {s.out}/data.yaml"
        )
    return 0


def _say_rewritten(out: Path, n: int, seed: int, start: int, val_fraction: float) -> None:
    """Say on stderr how many of the ``n`` images asked ``out`` holds already (a run stopped
    part way, or the same set asked again): they are written again, not kept as they are."""
    from vision.synth.dataset import sample_name, sample_split

    held = sum(
        (out / "images" / sample_split(i, val_fraction) / f"{sample_name(seed, i)}.jpg").is_file()
        for i in range(start, start + n)
    )
    if held:
        print(
            f"dicecam synth: {out} already holds {held} of the {n} images asked (seed {seed}, "
            f"images {start} to {start + n - 1}; a run stopped part way?): writing all {n} "
            "again, the same images for the same options",
            file=sys.stderr,
        )
