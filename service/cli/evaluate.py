"""``dicecam eval``: measure the reader on a labelled YOLO-format dataset.

dicecam eval ../shared/datasets/roboflow-dice/eval --all-on-table
dicecam eval datasets/synth-test/data.yaml --split test --json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from service.cli import UsageError, given_path
from service.cli._reader_options import add_reader_options, open_reader

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "eval",
        help="measure the reader on a labelled dataset",
        description=(
            "Read every photo of a YOLO-format dataset (a data.yaml, or a folder with images/ "
            "and labels/) and print face accuracy, die recall and precision, exact photos, the "
            "confusion matrix and median latency; off-table figures where meta/ sidecars give each "
            "die's state (or, with --all-on-table, the false busts on ordinary photos)."
        ),
    )
    p.add_argument(
        "dataset", metavar="DATASET", type=given_path, help="data.yaml or dataset folder"
    )
    p.add_argument(
        "--model",
        metavar="PATH",
        type=given_path,
        help="reader model (.onnx), e.g. a fine-tuned runs/finetune/NAME-ft.onnx, with the "
        "models beside it (default: DICECAM_MODEL, else the shipped one)",
    )
    p.add_argument("--split", default="val", help="split to read from a data.yaml (default: val)")
    p.add_argument("--limit", type=int, metavar="N", help="read only the first N photos")
    p.add_argument(
        "--all-on-table",
        action="store_true",
        help=(
            "no die left the table in the photos without a meta/ sidecar (ordinary photos such "
            "as roboflow-dice): report the false busts the reader calls on them"
        ),
    )
    told = p.add_mutually_exclusive_group()  # the count a photo holds, or the dice rolled
    told.add_argument(
        "--expect-count",
        action="store_true",
        help=(
            "tell the reader how many dice each photo holds (its labels' count), as the service "
            "does during a turn: it then keeps the likeliest dice, or adds faint ones, to that count"
        ),
    )
    told.add_argument(
        "--expect-rolled",
        action="store_true",
        help=(
            "tell the reader how many dice were rolled (a synthetic photo's sidecar counts them "
            "all, hidden and out of the photo too; the labels' count without one), as a turn "
            "does: a die the photo does not show is missing, a bust, and the busts count it "
            "(not with --expect-count)"
        ),
    )
    add_reader_options(p)
    p.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    p.add_argument(
        "--mistakes",
        action="store_true",
        help="list the photos not read exactly (and those busted falsely)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from vision.evaluate import DatasetError, evaluate_dataset

    if args.limit is not None and args.limit < 1:
        raise UsageError(f"--limit must be at least 1, got {args.limit}")
    reader = open_reader(args)
    try:
        result = evaluate_dataset(
            args.dataset,
            reader=reader,
            split=args.split,
            limit=args.limit,
            all_on_table=args.all_on_table,
            expect_count=args.expect_count,
            expect_rolled=args.expect_rolled,
        )
    except DatasetError as exc:
        raise UsageError(str(exc)) from None
    split = _split_read(args.dataset, args.split)
    if args.json:
        data = result.to_dict()
        data.update(dataset=str(args.dataset), split=split, model=str(reader.model_path))
        data["imgsz"] = list(reader.imgsz)
        data["dynamic"] = reader.dynamic
        data["second_look"] = reader.second_look
        data["mirror"] = reader.mirror
        data["backend"] = reader.backend
        if args.mistakes:
            data["mistakes"] = result.mistakes
            data["false_bust_images"] = result.table.false_bust_images
        print(json.dumps(data))
    else:
        h, w = reader.imgsz
        read = f"split {split}" if split else f"all of images/: it has no {args.split} split folder"
        print(f"dataset           {args.dataset} ({read})")
        shape = f"longer side {max(w, h)}, rectangular input" if reader.dynamic else f"{w}x{h}"
        if reader.second_look:
            shape += (
                f"; second look at {reader.second_look} when the median die is under "
                f"{reader.second_look_below:g} px"
            )
        if reader.mirror:
            shape += "; doubtful photos read again mirrored"
        print(f"model             {reader.model_path} ({shape}; on {reader.backend})")
        print(result.format())
        if args.mistakes and result.mistakes:
            print("not read exactly:")
            for name in result.mistakes:
                print(f"  {name}")
        if args.mistakes and result.unlabelled:
            print("labelled with no die, but the reader is sure of dice (check the labels):")
            for name, sure in result.unlabelled:
                print(f"  {name} ({sure} dice)")
        if args.mistakes and result.table.false_bust_images:
            print("busted falsely:")
            for name in result.table.false_bust_images:
                print(f"  {name}")
    for image, message in result.errors:
        print(f"dicecam eval: {image}: {message}", file=sys.stderr)
    return 1 if result.errors else 0  # the figures leave these photos out


def _split_read(dataset: str, split: str) -> str | None:
    """The split of ``dataset`` whose photos were read, or None where
    :func:`vision.yolo_dataset.find_images` read all of ``images/`` whatever ``--split`` says
    (photos in ``images/`` itself or in folders of their own, ``images/batch1/``...): told by
    where the photos it finds lie, not by judging the folders again."""
    from vision.yolo_dataset import SPLIT_ALIASES, find_images

    folder = Path(dataset).resolve() / "images"
    photos, _ = find_images(dataset, split)
    if not photos or folder not in photos[0].resolve().parents:
        return split  # a data.yaml said where they are
    names = SPLIT_ALIASES.get(split, (split,))
    return split if any(folder / name in photos[0].resolve().parents for name in names) else None
