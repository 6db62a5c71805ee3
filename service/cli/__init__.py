"""The ``dicecam`` command line.

Every module in this package that defines ``register(subparsers)`` adds its own subcommands
(``score``, ``read``, ``serve``, ...). A subcommand parser sets ``func=callable(args) -> int``.
Heavy imports (onnxruntime, torch, FastAPI) happen inside those callables, so ``dicecam score``
starts fast.

Exit status: 0 done; 1 the work failed in part (a photo that cannot be read among others, a
full disk); 2 bad usage (an unknown command or option, a value out of range, a missing file the
command needs); 130 interrupted (Ctrl-C); 143 stopped by SIGTERM (``kill PID``, systemd,
``docker stop``) and 129 by SIGHUP (its terminal closed), which take Ctrl-C's way out (see
:data:`STOP_SIGNALS`); 141 the reader of the output went away (``| head``).
Errors a user can fix raise :class:`UsageError`; ``main`` prints them on one line and exits 2.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import importlib.metadata
import os
import pkgutil
import signal
import sys
import threading
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from typing import Any

from service.cli._parser import Parser as _Parser
from service.cli._parser import _chosen, given_path

__all__ = [
    "BROKEN_PIPE",
    "INTERRUPTED",
    "SERVERS",
    "STOP_SIGNALS",
    "UsageError",
    "build_parser",
    "check_port",
    "given_path",
    "main",
    "settings_error",
    "use_colors",
]


INTERRUPTED = 130
"""Exit status after Ctrl-C (128 + SIGINT), as a shell reports a command SIGINT stopped."""

STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)
"""Signals that stop a command as Ctrl-C does (no SIGHUP on Windows, and no SIGTERM to catch):
files written whole, ``--out`` left as it was, one line, exit status 128 + the signal's number
(143 for SIGTERM, 129 for SIGHUP). A second one while the command cleans up is ignored."""

SERVERS = frozenset({"serve", "tracker"})
"""Commands that run uvicorn, which shuts down gracefully on SIGTERM itself: their signals are
left as they are."""

BROKEN_PIPE = 141
"""Exit status when the reader of the output went away (128 + SIGPIPE), as for ``yes | head``."""

_DISK_ERRORS = {
    errno.ENOSPC,
    errno.EDQUOT,
    errno.EFBIG,
    errno.EIO,
    errno.EROFS,
    errno.EACCES,
    errno.EPERM,
}
"""OSErrors of a disk or folder (full, failing, read-only, not ours) that ``main`` names in
one line."""


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


def use_colors() -> bool | None:
    """False when ``NO_COLOR`` is set and not empty (https://no-color.org), else None: the
    server's log in colour on a terminal only (uvicorn's ``use_colors``)."""
    return False if os.environ.get("NO_COLOR") else None


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="dicecam",
        description="Read physical dice from photos, score and advise, submit Morning Roll turns.",
    )
    parser.add_argument("--version", action="version", version=f"dicecam {_version()}")
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


def _version() -> str:
    try:
        return importlib.metadata.version("dicecam")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree not installed
        return "unknown (not installed)"


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
    return "; ".join(map(_setting_error, exc.errors()))


def _setting_error(error: Mapping[str, Any]) -> str:
    """One refused ``DICECAM_*`` variable: pydantic's message, without the ``Value error, ``
    prefix of a validator's own message, and what came unless the message names it already."""
    message = str(error["msg"]).removeprefix("Value error, ")
    got = repr(error.get("input"))
    if got not in message:
        message += f" (got {got})"
    return f"DICECAM_{'_'.join(map(str, error['loc'])).upper()}: {message}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``dicecam`` command ``argv`` (default: ``sys.argv[1:]``); return its exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    command = "dicecam"
    received: list[int] = []  # the stop signal that raised the KeyboardInterrupt, if any
    _escape_unencodable()
    # Pillow warns of what it read past in a photo (corrupt EXIF, odd TIFF tags) with a
    # traceback-like line naming its own source file; the photo is read all the same, or an
    # error names it. The command says nothing of it, as for a good photo.
    warnings.filterwarnings("ignore", category=UserWarning, module=r"PIL\.")
    try:
        parser = build_parser()
        if not argv:  # `dicecam` alone: what it can do, and a usage error's status
            parser.print_help(sys.stderr)
            print(f"\n{command}: error: expected a COMMAND", file=sys.stderr)
            return 2
        args = parser.parse_args(argv)
        command = _chosen(parser, args).prog  # "dicecam labels convert", as its usage errors
        if args.command in SERVERS:
            return _run(args, command)
        with _stop_signals_interrupt(received):
            return _run(args, command)
    except KeyboardInterrupt as exc:
        _forget_unhandled_interrupt()
        # files are written whole (vision.atomic): what was there before is still there; a
        # command may say more (`raise KeyboardInterrupt("--out left as it was")`)
        by = f" by {signal.Signals(received[0]).name}" if received else ""
        detail = f": {exc}" if str(exc) else ""
        with suppress(OSError):  # SIGHUP: the terminal it would go to may be gone
            print(f"{command}: interrupted{by}{detail}", file=sys.stderr)
        return 128 + received[0] if received else INTERRUPTED
    except BrokenPipeError:
        # the reader of our output went away (`dicecam read --json *.jpg | head`): stop quietly
        # and keep Python from complaining again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return BROKEN_PIPE


def _forget_unhandled_interrupt() -> None:
    """Keep ``python -m service.cli`` from dying of SIGINT after a Ctrl-C it has handled.

    CPython marks a KeyboardInterrupt that leaves an ``eval`` or ``exec`` of a string as
    unhandled (a flag of the runtime, bpo-1054041) though a caller catches it, and a process
    started with ``python -m`` then ends by SIGINT instead of with the status ``main``
    returns. ``namedtuple`` and ``dataclass`` build their methods that way, so a Ctrl-C in a
    lazy import did it (Pillow's plugins, at the first photo of ``dicecam label``). Every
    evaluation of a string clears the flag first; this one does nothing else."""
    eval("None")


@contextmanager
def _stop_signals_interrupt(received: list[int]) -> Iterator[None]:
    """While in this block, each of :data:`STOP_SIGNALS` raises KeyboardInterrupt, as SIGINT
    does, after appending its number to ``received``; the first only. The earlier handlers come
    back after. Off the main thread (``main`` called from a thread) nothing is changed."""

    def interrupt(signum: int, frame: object) -> None:
        if not received:  # a second stop waits for the cleanup of the first
            received.append(signum)
            raise KeyboardInterrupt

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {signum: signal.signal(signum, interrupt) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


def _escape_unencodable() -> None:
    """Let stdout and stderr write what their encoding cannot hold (``w\\xfcrfel 1.jpg`` on an
    ASCII or cp1252 console) instead of stopping the command with a UnicodeEncodeError; ``--json``
    output is ASCII already. See :func:`_escape`."""
    import codecs

    codecs.register_error(_ESCAPE, _escape)
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", None) in _REPLACED:
            reconfigure(errors=_ESCAPE)


_ESCAPE = "dicecam.escape"
_REPLACED = {"strict", "surrogateescape", "backslashreplace"}


def _escape(exc: UnicodeError) -> tuple[str | bytes, int]:
    """The error handler of stdout and stderr: a file name's bytes that are not in the file
    system's encoding (``surrogateescape``) are written back as they were, as ``ls`` does;
    any other character the console's encoding cannot hold as a ``\\x``/``\\u`` escape."""
    import codecs

    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    try:
        return codecs.lookup_error("surrogateescape")(exc)
    except UnicodeError:
        return codecs.backslashreplace_errors(exc)


def _run(args: argparse.Namespace, command: str) -> int:
    try:
        return int(args.func(args) or 0)
    except UsageError as exc:  # one raised over a settings error names the variables instead
        cause = exc.__cause__ or exc.__context__
        message = (settings_error(cause) if cause is not None else None) or exc
        print(f"{command}: error: {message}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # an OSError, but not the disk's: main says nothing of it
        raise
    except OSError as exc:
        if exc.errno not in _DISK_ERRORS:
            raise
        # a full disk or a folder that cannot be written: one line naming the file, as for
        # other errors (files written atomically keep their old content)
        where = f": {exc.filename}" if exc.filename else ""
        print(f"{command}: error: {exc.strerror}{where}", file=sys.stderr)
        return 1
    except Exception as exc:
        message = settings_error(exc)
        if message is None:
            raise
        print(f"{command}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
