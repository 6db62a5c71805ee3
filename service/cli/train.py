"""``dicecam train``: make the shipped reader from its recipe, or fine-tune it on new dice."""

from __future__ import annotations

import argparse
from pathlib import Path

from service.cli import UsageError
from service.cli._train_data import check_data

__all__ = ["register", "run"]

STAGES = ("all", "data", "detector", "faces", "int8", "card")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "train",
        help="train the reader (detector + face classifier) from its recipe, or fine-tune it",
        description=(
            "Without --from: render the recipe's synthetic set, train the YOLO detector on it plus "
            "the real photos, train the face classifier on die crops, export both to ONNX in "
            "--out and write the model card. With --from MODEL --data DIR: fine-tune that model "
            "on a new dice set (a YOLO folder), keeping a held-out split, and print the "
            "evaluation before and after. Needs the training extra: pip install -e '.[train]'."
        ),
    )
    p.add_argument(
        "--recipe",
        type=Path,
        default=None,
        help="recipe YAML (default: datasets/recipes/dicecam-reader.yaml)",
    )
    p.add_argument(
        "--work",
        type=Path,
        default=Path("runs/train"),
        help="working folder for data and checkpoints (default runs/train)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="folder for the exported models (default models/, or runs/finetune for --from); "
        "a model of that --name already there is kept until the new one is complete, then "
        "replaced whole (a --stage other than all writes its files as it goes)",
    )
    p.add_argument(
        "--name", default=None, help="model name (default: the recipe's, or NAME-ft for --from)"
    )
    p.add_argument(
        "--stage",
        choices=STAGES,
        default="all",
        help="run one step only (default all; int8: quantize the shipped face classifier "
        "from its float .pt again)",
    )
    p.add_argument(
        "--data",
        type=Path,
        action="append",
        default=None,
        help="YOLO dataset folder with images/ and labels/ (new dice to learn); repeatable",
    )
    p.add_argument(
        "--from",
        dest="from_model",
        type=Path,
        default=None,
        metavar="MODEL",
        help="fine-tune this model: NAME.onnx (or NAME) with its detector checkpoint NAME.pt "
        "beside it; the face classifier goes on from NAME-faces.pt when that is there too, "
        "else it is trained anew",
    )
    p.add_argument(
        "--epochs", type=int, default=None, help="detector epochs (overrides the recipe)"
    )
    p.add_argument(
        "--time-hours",
        type=float,
        default=None,
        help="detector wall-clock budget in hours (overrides the recipe)",
    )
    p.add_argument(
        "--faces-epochs",
        type=int,
        default=None,
        help="face classifier epochs (overrides the recipe; 12 when fine-tuning with --from)",
    )
    p.add_argument(
        "--faces-blur",
        type=float,
        default=None,
        metavar="P",
        help="share of the face classifier's training crops blurred (overrides the recipe)",
    )
    p.add_argument(
        "--faces-lr",
        type=float,
        default=None,
        metavar="LR",
        help="face classifier's peak learning rate (overrides the recipe, 0.003)",
    )
    p.add_argument(
        "--synth",
        type=int,
        default=None,
        help="synthetic images to render (overrides the recipe; 0 = none)",
    )
    p.add_argument(
        "--init",
        type=Path,
        default=None,
        help="start the detector from this checkpoint (.pt) instead of the recipe's architecture",
    )
    p.add_argument(
        "--faces-init",
        type=Path,
        default=None,
        help="start the face classifier from these weights (.pt) instead of from scratch",
    )
    p.add_argument(
        "--faces-join",
        type=Path,
        action="append",
        default=None,
        help="join the face classifier trained with these (.pt; repeatable) into one model that "
        "reads the mean of their probabilities",
    )
    p.add_argument(
        "--soup",
        type=Path,
        action="append",
        default=None,
        metavar="CKPT",
        help="the detector step averages these detector checkpoints (.pt; repeatable, at least "
        "2, one listed twice weighs twice; all fine-tuned from one start) instead of training",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="processes rendering synthetic images (default 1)",
    )
    p.add_argument(
        "--holdout",
        type=float,
        default=None,
        help="with --from: share of --data photos held out for evaluation (default 0.2)",
    )
    p.add_argument(
        "--replay",
        type=int,
        default=None,
        help="with --from: photos the model already knew (the recipe's real photos) trained "
        "again with the new ones so the detector does not forget them (default 300)",
    )
    p.add_argument(
        "--detector",
        choices=("auto", "tune", "keep"),
        default=None,
        help="with --from: keep the fine-tuned detector only if it reads the held-out photos "
        "better and 60 known photos (not replayed) no worse, less 1%% of their dice (auto, "
        "default), always (tune), or keep the starting detector and fine-tune the face "
        "classifier only (keep)",
    )
    p.add_argument(
        "--freeze",
        type=int,
        default=None,
        help="with --from: detector layers kept as they are (10 = the whole backbone; default 0)",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="N",
        help="random seed of the detector's and face classifier's training (and, with --from, "
        "of the held-out photos) (default 0)",
    )
    p.add_argument(
        "--device",
        default="cpu",
        help="where the detector and the face classifier train: cpu, or a CUDA GPU by its number "
        "(0) (default cpu)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        from vision.train.env import train_threads
        from vision.train.recipe import load_recipe

        train_threads()  # a bad DICECAM_TRAIN_THREADS stops the run now, not after minutes
        recipe = load_recipe(args.recipe)
        recipe.card_overview_text()  # a missing hand-written card section fails now
        recipe.card_extra_text()
    except (FileNotFoundError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    _check_fine_tuning(args)
    if args.freeze is not None and not 0 <= args.freeze <= 22:
        raise UsageError(f"--freeze must be 0 to 22 layers, got {args.freeze}")
    if args.epochs is not None:
        if args.epochs < 1:
            raise UsageError(f"--epochs must be at least 1, got {args.epochs}")
        recipe.detector.epochs = args.epochs
        recipe.detector.time_hours = None
    if args.time_hours is not None:
        if not args.time_hours > 0:
            raise UsageError(f"--time-hours must be above 0, got {args.time_hours}")
        recipe.detector.time_hours = args.time_hours
    _check_device(args.device)
    if args.workers < 1:
        raise UsageError(f"--workers must be at least 1, got {args.workers}")
    if args.init is not None:
        if args.init.suffix != ".pt" or not args.init.is_file():
            raise UsageError(f"--init must be a detector checkpoint (.pt file), got {args.init}")
        recipe.detector.model = str(args.init.resolve())
    if args.faces_init is not None and not args.faces_init.is_file():
        raise UsageError(
            f"--faces-init must be face classifier weights (.pt), got {args.faces_init}"
        )
    for joined in args.faces_join or []:
        if joined.suffix != ".pt" or not joined.is_file():
            raise UsageError(f"--faces-join must be face classifier weights (.pt), got {joined}")
    if args.soup is not None:
        if len(args.soup) < 2:
            raise UsageError(f"--soup needs at least 2 checkpoints, got {len(args.soup)}")
        for ckpt in args.soup:
            if ckpt.suffix != ".pt" or not ckpt.is_file():
                raise UsageError(f"--soup must name detector checkpoints (.pt files), got {ckpt}")
        if args.from_model is not None or args.init is not None:
            raise UsageError(
                "--soup averages finished detectors; it goes with neither --from nor --init"
            )
        if args.stage not in ("all", "detector"):
            raise UsageError(
                f"--soup makes the detector: it goes with --stage detector or all, "
                f"got --stage {args.stage}"
            )
    if args.faces_join and args.from_model is not None:
        raise UsageError("--faces-join trains a classifier to join; it does not go with --from")
    if args.faces_epochs is not None:
        if args.faces_epochs < 1:
            raise UsageError(f"--faces-epochs must be at least 1, got {args.faces_epochs}")
        recipe.faces.epochs = args.faces_epochs
    if args.faces_blur is not None:
        if not 0.0 <= args.faces_blur <= 1.0:
            raise UsageError(f"--faces-blur is a share from 0 to 1, got {args.faces_blur}")
        recipe.faces.blur = args.faces_blur
    if args.faces_lr is not None:
        if not args.faces_lr > 0:
            raise UsageError(f"--faces-lr is a learning rate above 0, got {args.faces_lr}")
        recipe.faces.lr = args.faces_lr
    if args.synth is not None:
        if args.synth < 0:
            raise UsageError(f"--synth must be 0 or more images, got {args.synth}")
        recipe.synth.n = args.synth
    check_data(args.data or [])
    if args.from_model is not None:
        from vision.train.finetune import fine_tuned_model, starting_model

        if not args.data:
            raise UsageError("--from needs --data DIR: the labelled photos of the new dice")
        try:
            base, _ = starting_model(args.from_model)
        except FileNotFoundError as exc:
            raise UsageError(str(exc)) from None
        final = fine_tuned_model(base, args.out, args.name)
        if final == base.resolve():
            raise UsageError(
                f"--out/--name: expected a model other than the one fine-tuned, got {base} "
                "(it would be written over while read); choose another --name"
            )
        _check_out(final.parent)
    import importlib.util

    if any(importlib.util.find_spec(m) is None for m in ("torch", "ultralytics")):
        raise UsageError("training needs the train extra: pip install -e '.[train]'")

    if args.from_model is not None:
        from vision.stages import ModelError
        from vision.train.finetune import check_starting_model, finetune
        from vision.train.holdout import SplitError

        try:
            check_starting_model(base)
        except ModelError as exc:
            raise UsageError(str(exc)) from None
        try:
            return finetune(recipe, args)
        except SplitError as exc:
            raise UsageError(f"--data: {exc}") from None

    from vision.train.run import train_reader

    try:
        return train_reader(recipe, args)
    except FileNotFoundError as exc:  # no weights to quantize, no model to measure: said first
        if args.stage not in ("int8", "card"):
            raise
        raise UsageError(str(exc)) from None


def _check_out(out: Path) -> None:
    """Refuse now an output folder the finished model could not be put into (a file in its
    place or above it, a folder this user cannot write), which a run found out only at its end."""
    import os

    there = out
    while not there.exists() and there != there.parent:
        there = there.parent
    if not there.is_dir():
        raise UsageError(
            f"--out: expected a folder to put the model into, got {out} ({there} is a file)"
        )
    if not os.access(there, os.W_OK | os.X_OK):
        raise UsageError(
            f"--out: expected a folder to put the model into, got {out} ({there} is not writable)"
        )


FINE_TUNING = {"holdout": 0.2, "replay": 300, "detector": "auto"}
"""The options of ``--from`` alone (with ``--freeze``), and their defaults."""


def _check_fine_tuning(args: argparse.Namespace) -> None:
    """Options of fine-tuning go with ``--from`` only (without it a whole new model would be
    trained, into models/ by default); with it, their defaults are filled in and checked."""
    given = [f"--{k}" for k in (*FINE_TUNING, "freeze") if getattr(args, k) is not None]
    if args.from_model is None:
        if given:
            raise UsageError(
                f"{', '.join(given)} go with --from (fine-tuning a shipped model); without it "
                "dicecam train trains a whole new model from the recipe"
            )
        return
    for key, default in FINE_TUNING.items():
        if getattr(args, key) is None:
            setattr(args, key, default)
    if not 0 < args.holdout < 1:
        raise UsageError(f"--holdout is a share above 0 and under 1, got {args.holdout}")
    if args.replay < 0:
        raise UsageError(f"--replay must be 0 or more photos, got {args.replay}")


def _check_device(device: str) -> None:
    """Refuse a device the detector and face classifier cannot train on, before any data is
    rendered."""
    if device == "cpu":
        return
    if not (device.isascii() and device.isdecimal()):  # '²' is a digit int() refuses
        raise UsageError(f"--device must be cpu or a CUDA GPU's number such as 0, got {device!r}")
    try:
        import torch
    except ImportError:
        raise UsageError(
            f"--device {device} needs torch, which is not installed: pip install -e '.[train]'"
        ) from None
    count = torch.cuda.device_count()
    if int(device) >= count:
        found = f"{count} CUDA GPU(s) found" if count else "no CUDA GPU found"
        raise UsageError(f"--device {device}: {found} here; use --device cpu")
