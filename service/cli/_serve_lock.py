"""One ``dicecam serve`` per data folder: a second one is refused at its start.

A server holds the turns and sheets in play in memory and saves each move to its data folder.
Two servers on one folder each answered from their own copy: a turn moved on one still showed
its old state on the other until a move there was refused (409). The lock is an OS file lock
(``flock``) on ``serve.lock`` in the folder, so a server that is killed leaves no stale lock:
the system lets go of it with the process. The file says which process holds it, for the
message the second server prints.

Example:
    >>> with serve_lock([Path("~/.dicecam/serve.lock").expanduser()]) as note:  # doctest: +SKIP
    ...     note("http://127.0.0.1:8000/")
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO

from service.cli import UsageError

__all__ = ["LOCK_NAME", "serve_lock"]

LOCK_NAME = "serve.lock"
"""The lock file ``dicecam serve`` holds in its data folder."""


@contextmanager
def serve_lock(paths: Sequence[Path]) -> Iterator[Callable[[str], None]]:
    """Hold an exclusive lock on each of ``paths`` (made when missing) for the block; yield a
    function that writes where this server listens into them, for a second one's message.

    Raises:
        UsageError: another process holds one of them (its pid and address named when it
            wrote them), or the lock file cannot be made.
    """
    with ExitStack() as held:
        files = [held.enter_context(_locked(path)) for path in dict.fromkeys(paths)]

        def note(url: str) -> None:
            for f in files:
                f.seek(0)
                f.truncate()
                f.write(f"{os.getpid()} {url}\n")
                f.flush()

        note("")
        yield note


@contextmanager
def _locked(path: Path) -> Iterator[IO[str]]:
    try:
        import fcntl
    except ImportError:  # Windows: no flock; the servers' own checks (409) remain
        with open(os.devnull, "w") as f:
            yield f
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)  # a turns file's folder, made as its db
        f = open(path, "a+", encoding="utf-8")  # noqa: SIM115 (closed below; its OSError only)
    except OSError as exc:
        raise UsageError(f"cannot make the lock file {path}: {exc.strerror or exc}") from None
    with f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise UsageError(_held_by(path, f)) from None
        yield f


def _held_by(path: Path, f: IO[str]) -> str:
    """The message for a lock another process holds: who, from what it wrote."""
    f.seek(0)
    pid, _, url = f.read(200).strip().partition(" ")
    who = f"dicecam serve (pid {pid}{', ' + url if url else ''})" if pid else "dicecam serve"
    return (
        f"another {who} already uses {path.parent} (its lock {path.name} is held): one dicecam "
        "serve per data folder, as each keeps the turns in play in memory; stop that one, or "
        "give this one its own folder (--data-dir or DICECAM_DATA_DIR)"
    )
