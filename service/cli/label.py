"""``dicecam label``: batch-label photos; ``dicecam labels import|convert``: bring labels back.

Examples::

    dicecam label photos/ --out labelled/ --format labelstudio
    dicecam labels import export.json --images-from photos/ --out train-set/
    dicecam labels convert labelled/ --to coco --out coco/
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path

from service.cli import UsageError
from service.cli._label_out import staged

__all__ = ["FORMATS", "register", "run", "run_convert", "run_import"]

FORMATS = ("yolo", "coco", "labelstudio")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "label",
        help="label a folder of photos with the reader (YOLO, COCO or Label Studio)",
        description="Read every photo under PHOTOS (recursively) and write labels for review, "
        "a review list (lowest confidence first) and the list of photos that could not be read.",
    )
    p.add_argument("photos", type=Path, metavar="PHOTOS", help="folder of photos")
    p.add_argument("--out", type=Path, required=True, help="output folder (new or empty)")
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="labelstudio",
        dest="fmt",
        help="label format to write (default labelstudio)",
    )
    p.add_argument(
        "--model",
        type=Path,
        metavar="PATH",
        help="reader model (.onnx); default: DICECAM_MODEL, else the shipped one",
    )
    p.add_argument(
        "--conf",
        type=float,
        help="label only the dice found at least this confident, 0 to 1 "
        "(default DICECAM_CONF, else 0.25)",
    )
    p.add_argument(
        "--expect",
        metavar="N",
        type=int,
        help="every photo shows N dice: the reader fits its dice to N, and the photos it still "
        "reads short are listed first for review",
    )
    _add_write_options(p, version="the model file's name, such as dicecam-reader")
    p.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    p.add_argument("--overwrite", action="store_true", help="write into a non-empty --out")
    p.set_defaults(func=run)

    labels = subparsers.add_parser(
        "labels",
        help="import corrected labels for training, or convert between formats",
        description="Bring labels back from a labelling tool: `import` writes a YOLO folder for "
        "`dicecam train --data`, `convert` writes another label format.",
    )
    sub = labels.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    imp = sub.add_parser(
        "import",
        help="corrected labels (Label Studio export, COCO or YOLO) -> YOLO training folder",
        description="Read corrected labels and write a YOLO folder for `dicecam train --data`.",
    )
    _add_source_options(imp)
    imp.add_argument("--copy", action="store_true", help="copy photos (default: link them)")
    imp.add_argument(
        "--cocked-class",
        action="store_true",
        help="cocked dice as class 6 'cocked' (default: as their best-guess face, and a cocked "
        "die labelled without a face is refused)",
    )
    imp.add_argument("--overwrite", action="store_true", help="write into a non-empty --out")
    imp.set_defaults(func=run_import)
    conv = sub.add_parser(
        "convert",
        help="convert labels between yolo, coco and labelstudio",
        description="Read labels in one format (yolo, coco or labelstudio) and write them in "
        "another (--to), the photos placed beside them as --images says.",
    )
    _add_source_options(conv)
    conv.add_argument(
        "--to", choices=FORMATS, required=True, dest="to_fmt", help="label format to write"
    )
    _add_write_options(conv, version="dicecam")
    conv.add_argument("--overwrite", action="store_true", help="write into a non-empty --out")
    conv.set_defaults(func=run_convert)


def _add_write_options(p: argparse.ArgumentParser, *, version: str) -> None:
    p.add_argument(
        "--images",
        choices=("copy", "link", "none"),
        help="place photos beside the labels (default: copy for yolo/coco, none for labelstudio)",
    )
    p.add_argument(
        "--image-prefix",
        metavar="PREFIX",
        help="Label Studio data.image prefix (default /data/local-files/?d=; or an http:// URL)",
    )
    p.add_argument(
        "--model-version",
        default=None,
        metavar="NAME",
        help="the model name Label Studio shows for the pre-annotations (their model_version; "
        f"default: {version})",
    )
    p.add_argument(
        "--cocked-class",
        action="store_true",
        help="YOLO: cocked dice as class 6 'cocked' (default: as their best-guess face)",
    )


def _add_source_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("source", type=Path, metavar="LABELS", help="label file or dataset folder")
    p.add_argument(
        "--from",
        choices=FORMATS,
        dest="from_fmt",
        help="the labels' format (default: told from the file or folder)",
    )
    p.add_argument(
        "--images-from",
        type=Path,
        metavar="DIR",
        help="folder holding the photos (default: the folder of the label file, or the YOLO "
        "folder's images/)",
    )
    p.add_argument("--out", type=Path, required=True, help="output folder (new or empty)")


def _check_out(out: Path, overwrite: bool) -> None:
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out must be a folder, got a file: {out}")
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        raise UsageError(f"--out {out} is not empty; pass --overwrite to write into it anyway")


def _make_reader(model: Path | None, conf: float | None):
    try:
        from vision.reader import DiceReader, ModelError
    except ImportError as exc:
        raise UsageError(f"the dice reader is not available in this install ({exc})") from exc
    if model is not None and not model.is_file():
        raise UsageError(f"--model: expected a model file, got {str(model)!r} (not found)")
    try:
        return DiceReader(model, conf=conf)
    except (ModelError, OSError, ValueError) as exc:
        raise UsageError(str(exc)) from exc


def run(args: argparse.Namespace) -> int:
    from vision.atomic import atomic_write
    from vision.labelling import find_photos, label_photos, write_label_run

    if not args.photos.is_dir():
        what = "a file" if args.photos.exists() else "no such folder"
        raise UsageError(f"PHOTOS must be a folder of photos, got {str(args.photos)!r} ({what})")
    if args.conf is not None and not 0.0 <= args.conf <= 1.0:
        raise UsageError(f"--conf must be between 0 and 1, got {args.conf}")
    if args.expect is not None and args.expect < 1:
        raise UsageError(f"--expect must be a positive number of dice, got {args.expect}")
    photos, out = args.photos.resolve(), args.out.resolve()
    if photos == out or photos.is_relative_to(out):  # photos under --out are not labelled
        what = "PHOTOS itself" if photos == out else "a folder that holds PHOTOS"
        raise UsageError(f"--out must differ from PHOTOS and not hold it, got {what}: {args.out}")
    _check_out(args.out, args.overwrite)
    if not find_photos(args.photos):
        raise UsageError(f"no photos (.jpg, .png, ...) found under {args.photos}")
    reader = _make_reader(args.model, args.conf)
    model_path = getattr(reader, "model_path", None)
    version = args.model_version or (Path(model_path).stem if model_path else "dicecam-reader")
    run_ = label_photos(  # read first: a run stopped while reading has written nothing
        args.photos,
        reader,
        conf=args.conf or 0.0,
        show_progress=not args.no_progress,
        exclude=args.out,
        expected_dice=args.expect,
    )
    with staged(args.out, "dicecam label") as folder:
        write_label_run(run_, folder, args.fmt, **_write_kwargs(args, version))
        if folder != args.out:  # the summary names the files where they will be
            run_.outputs = {k: args.out / v.relative_to(folder) for k, v in run_.outputs.items()}
            atomic_write(folder / "summary.json", json.dumps(run_.summary(), indent=1))
    total = len(run_.photos) + len(run_.unreadable)
    print(
        f"labelled {len(run_.photos)} of {total} photos ({run_.dice} dice) in "
        f"{run_.seconds:.1f} s -> {run_.outputs['labels']}"
    )
    unsure = f"; {run_.unsure} values the reader is unsure of, flagged" if run_.unsure else ""
    print(f"review list (lowest confidence first{unsure}): {run_.outputs['review']}")
    if run_.unreadable:
        print(f"unreadable: {len(run_.unreadable)} (listed in {run_.outputs['unreadable']})")
        for u in run_.unreadable:  # named on stderr, as `dicecam read` does
            print(f"dicecam label: {u.name}: {u.reason}", file=sys.stderr)
    if run_.short:
        print(
            f"read with fewer than {args.expect} dice: {len(run_.short)} (listed in "
            f"{run_.outputs['summary']}: short_of_count)"
        )
    return 1 if run_.unreadable or not run_.photos else 0  # as `dicecam read`: a photo not read


def _write_kwargs(args: argparse.Namespace, version: str) -> dict[str, object]:
    return {
        "images": args.images,
        "image_prefix": args.image_prefix,
        "model_version": version,
        "cocked_class": args.cocked_class,
    }


def _read(args: argparse.Namespace):
    from vision.labelling import LabelFormatError, read_labels

    if not args.source.exists():
        raise UsageError(f"LABELS: no such file or folder: {args.source}")
    if args.images_from is not None and not args.images_from.is_dir():
        raise UsageError(f"--images-from must be a folder, got {str(args.images_from)!r}")
    try:
        return read_labels(args.source, args.from_fmt, image_root=args.images_from)
    except (LabelFormatError, FileNotFoundError) as exc:
        raise UsageError(str(exc)) from exc
    except (KeyError, TypeError, AttributeError) as exc:
        detail = f"missing key {exc}" if isinstance(exc, KeyError) else str(exc)
        raise UsageError(f"cannot read {args.source}: unexpected content ({detail})") from exc


def run_import(args: argparse.Namespace) -> int:
    from vision.labelling import write_training_folder

    _check_out(args.out, args.overwrite)
    photos = _read(args)
    if not photos:  # an empty training folder would only fail later, in `dicecam train`
        raise UsageError(f"expected labelled photos in {args.source}, got none")
    images = "copy" if args.copy else "link"
    try:
        with staged(args.out, "dicecam labels import") as folder:
            written = write_training_folder(
                photos, folder, images=images, cocked_class=args.cocked_class
            )
    except (FileNotFoundError, ValueError) as exc:
        raise UsageError(str(exc)) from exc
    data_yaml = args.out / written.relative_to(folder)
    dice = sum(len(p.dice) for p in photos)
    print(
        f"imported {_photos(len(photos))} ({dice} {'die' if dice == 1 else 'dice'}) -> {data_yaml}"
    )
    # --from: without it `dicecam train` makes a whole new reader from the recipe, into models/
    from vision.config import DEFAULT_MODEL

    shipped, out = (shlex.quote(_from_here(p)) for p in (DEFAULT_MODEL, args.out))
    print(f"fine-tune on it with: dicecam train --from {shipped} --data {out}")
    return 0


def _photos(n: int) -> str:
    return "1 photo" if n == 1 else f"{n} photos"


def _from_here(path: Path) -> str:
    """``path`` as a command run from the current folder names it: relative under it (the
    shipped model of a clone is ``models/dicecam-reader.onnx`` there), else absolute."""
    path = Path(os.path.abspath(path))
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def run_convert(args: argparse.Namespace) -> int:
    from vision.labelling import write_labels

    _check_out(args.out, args.overwrite)
    photos = _read(args)
    options = _write_kwargs(args, args.model_version or "dicecam")
    try:
        with staged(args.out, "dicecam labels convert") as folder:
            written = write_labels(photos, folder, args.to_fmt, **options)
    except (FileNotFoundError, ValueError) as exc:
        raise UsageError(str(exc)) from exc
    path = args.out / written.relative_to(folder)
    print(f"converted {_photos(len(photos))} to {args.to_fmt} -> {path}", file=sys.stdout)
    return 0
