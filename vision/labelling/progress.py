"""A progress bar with an ETA on stderr: tqdm when it is installed, a small one otherwise."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import TextIO, TypeVar

__all__ = ["progress"]

T = TypeVar("T")


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return (
        f"{seconds // 60}:{seconds % 60:02d}"
        if seconds < 3600
        else f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    )


def _simple(items: Iterable[T], total: int, desc: str, stream: TextIO) -> Iterator[T]:
    start = time.monotonic()
    tty = stream.isatty()
    last_len, last_print = 0, 0.0

    def show(done: int, final: bool = False) -> None:
        nonlocal last_len, last_print
        now = time.monotonic()
        if not final and done and now - last_print < (0.1 if tty else 2.0):
            return
        last_print = now
        elapsed = now - start
        rate = done / elapsed if elapsed > 0 else 0.0
        # no ETA before the first item is done: nothing to estimate it from yet
        eta = "0:00" if done >= total else _clock((total - done) / rate) if rate > 0 else "?"
        width = 24
        filled = int(width * done / total) if total else width
        line = (
            f"{desc} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} "
            f"{rate:.1f}/s elapsed {_clock(elapsed)} ETA {eta}"
        )
        if tty:
            stream.write("\r" + line + " " * max(0, last_len - len(line)))
            last_len = len(line)
            if final:
                stream.write("\n")
        else:
            stream.write(line + "\n")
        stream.flush()

    done = 0
    show(0)
    for item in items:
        yield item
        done += 1
        show(done, final=done == total)
    if done != total:
        show(done, final=True)


def progress(
    items: Iterable[T],
    *,
    total: int,
    desc: str = "",
    stream: TextIO | None = None,
    enabled: bool = True,
) -> Iterator[T]:
    """Yield ``items`` while drawing a progress bar (count, rate, elapsed, ETA) on ``stream``.

    Example:
        >>> for photo in progress(photos, total=len(photos), desc="label"):  # doctest: +SKIP
        ...     read(photo)
    """
    if not enabled:
        yield from items
        return
    stream = sys.stderr if stream is None else stream
    try:
        from tqdm import tqdm
    except ImportError:
        yield from _simple(items, total, desc, stream)
        return
    yield from tqdm(items, total=total, desc=desc, file=stream, unit="photo")
