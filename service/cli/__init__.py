"""The ``dicecam`` command line.

Every module in this package that defines ``register(subparsers)`` adds its own subcommands
(``score``, ``read``, ``serve``, ...). A subcommand parser sets ``func=callable(args) -> int``.
Heavy imports (onnxruntime, torch, FastAPI) happen inside those callables, so ``dicecam score``
starts fast.

Errors a user can fix raise :class:`UsageError`; ``main`` prints them on one line and exits 2.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import pkgutil
import sys
from collections.abc import Sequence

__all__ = ["UsageError", "build_parser", "main", "check_port", "settings_error"]


_DISK_ERRORS = {
    errno.ENOSPC,
    errno.EDQUOT,
    errno.EFBIG,
    errno.EROFS,
    errno.EACCES,
    errno.EPERM,
}
"""OSErrors of a disk or folder (full, read-only, not ours) that ``main`` names in one line."""


class UsageError(Exception):
    """A problem with what the user asked for: printed as one line, exit status 2."""


def check_port(port: int | None) -> int | None:
    """A ``--port`` as given (None: not given), or UsageError unless it is 0 to 65535.

    Example:
        >>> check_port(8000)
        8000
    """
    if port is not None and not 0 <= port <= 65535:
        raise UsageError(f"--port must be 0 to 65535, got {port}")
    return port


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dicecam",
        description="Read physical dice from photos, score and advise, submit Morning Roll turns.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(sub)
    return parser


def settings_error(exc: BaseException) -> str | None:
    """One line naming the ``DICECAM_*`` variables a settings class refused, or None when ``exc``
    is not such an error.

    Example:
        >>> from vision.config import VisionSettings
        >>> try:
        ...     VisionSettings(conf="abc")
        ... except Exception as exc:
        ...     print(settings_error(exc))
        DICECAM_CONF: Input should be a valid number, unable to parse string as a number (got 'abc')
    """
    from pydantic import ValidationError

    if not isinstance(exc, ValidationError) or not exc.title.endswith("Settings"):
        return None
    return "; ".join(
        f"DICECAM_{'_'.join(map(str, e['loc'])).upper()}: {e['msg']} (got {e.get('input')!r})"
        for e in exc.errors()
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UsageError as exc:  # one raised over a settings error names the variables instead
        cause = exc.__cause__ or exc.__context__
        message = (settings_error(cause) if cause is not None else None) or exc
        print(f"dicecam {args.command}: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader of our output went away (`dicecam read --json *.jpg | head`): stop quietly
        # and keep Python from complaining again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except OSError as exc:
        if exc.errno not in _DISK_ERRORS:
            raise
        # a full disk or a folder that cannot be written: one line naming the file, as for
        # other errors (files written atomically keep their old content)
        where = f": {exc.filename}" if exc.filename else ""
        print(f"dicecam {args.command}: error: {exc.strerror}{where}", file=sys.stderr)
        return 1
    except Exception as exc:
        message = settings_error(exc)
        if message is None:
            raise
        print(f"dicecam {args.command}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
