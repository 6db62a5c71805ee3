"""Reader options shared by ``dicecam read`` and ``dicecam eval``, and the reader they open."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING

from service.cli import UsageError

if TYPE_CHECKING:
    from vision.reader import DiceReader

__all__ = ["BACKENDS", "add_reader_options", "check_reader_options", "open_reader"]

BACKENDS = ("auto", "openvino", "onnxruntime")
"""``vision.backends.BACKENDS``, named here so that ``dicecam --help`` need not import ``vision``
(numpy, pydantic, OpenCV: half a second); a test holds the two equal."""


def add_reader_options(p: argparse.ArgumentParser) -> None:
    """Add ``--conf``, ``--imgsz``, ``--second-look``, ``--mirror`` and ``--backend`` to a
    subcommand that builds a reader."""
    p.add_argument(
        "--conf",
        type=float,
        help="keep only the dice found at least this confident, 0 to 1: lower finds more faint "
        "dice and more things that are not dice (default: DICECAM_CONF, else 0.25)",
    )
    p.add_argument(
        "--imgsz",
        type=int,
        metavar="SIZE",
        help="input size (longer side) of the first look, a multiple of 32: smaller reads "
        "faster and finds fewer far dice (default: DICECAM_IMGSZ, else the model's, 512)",
    )
    p.add_argument(
        "--second-look",
        type=int,
        metavar="SIZE",
        help="read photos of small dice again at this input size; 0: never "
        "(default: DICECAM_SECOND_LOOK, else half as large again as the model's size)",
    )
    p.add_argument(
        "--mirror",
        action=argparse.BooleanOptionalAction,
        help="read a photo with a doubtful die again mirrored, for a second opinion on its "
        "boxes (default: DICECAM_MIRROR, else on)",
    )
    p.add_argument(
        "--backend",
        choices=BACKENDS,
        help="runtime of the detector (default: DICECAM_BACKEND, else auto: OpenVINO when "
        "installed, onnxruntime otherwise)",
    )


def check_reader_options(args: argparse.Namespace) -> None:
    """Raise :class:`UsageError` for a confidence outside 0..1, an input size under 32 or not a
    multiple of 32, or a negative second look."""
    if args.conf is not None and not 0.0 <= args.conf <= 1.0:
        raise UsageError(f"--conf must be between 0 and 1, got {args.conf}")
    if args.imgsz is not None and args.imgsz < 32:
        raise UsageError(f"--imgsz must be an input size of at least 32, got {args.imgsz}")
    if args.imgsz is not None:
        from vision.config import check_imgsz

        try:
            check_imgsz(args.imgsz)
        except ValueError as exc:
            raise UsageError(f"--imgsz: {exc}, got {args.imgsz}") from None
    if args.second_look is not None and args.second_look < 0:
        raise UsageError(f"--second-look must be an input size (0: never), got {args.second_look}")


def open_reader(args: argparse.Namespace) -> DiceReader:
    """The reader the options ask for (``--model`` and those of :func:`add_reader_options`).

    Raises:
        UsageError: an option out of range, a model that cannot be loaded, or a ``DICECAM_*``
            setting the reader cannot use (say ``DICECAM_BACKEND=bogus``).
    """
    from vision.reader import DiceReader, ModelError

    check_reader_options(args)
    try:
        return DiceReader(
            args.model,
            conf=args.conf,
            imgsz=args.imgsz,
            second_look=args.second_look,
            backend=args.backend,
            mirror=args.mirror,
        )
    except ModelError as exc:  # say which setting chose the model
        named = "--model" if args.model is not None else None
        if named is None and os.environ.get("DICECAM_MODEL"):
            named = "DICECAM_MODEL"
        raise UsageError(f"{exc} (named by {named})" if named else str(exc)) from None
    except ValueError as exc:  # a DICECAM_* setting it cannot use
        raise UsageError(str(exc)) from None
