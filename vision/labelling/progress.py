"""A progress bar with an ETA on stderr: tqdm when it is installed, a small one otherwise.

On a terminal the bar redraws itself in place. Anywhere else (a CI log, ``2> log.txt``) no
line is redrawn: one line is written when the run starts, at each further tenth of it, at
least every :data:`LOG_EVERY_S` seconds between, and at the end, so a long run logs a few
dozen lines, not thousands.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from typing import TextIO, TypeVar

__all__ = ["ProgressBar", "progress"]

T = TypeVar("T")

LOG_EVERY_S = 60.0
"""Off a terminal, the longest wait between two progress lines, in seconds."""


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    return (
        f"{seconds // 60}:{seconds % 60:02d}"
        if seconds < 3600
        else f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    )


class ProgressBar:
    """The small bar (count, rate, elapsed, ETA): ``update(done)`` after each item.

    Example (off a terminal, as here, a line at each tenth of the run; a terminal's is redrawn):
        >>> bar = ProgressBar(3, desc="synth", stream=sys.stdout)  # doctest: +ELLIPSIS
        synth [........................] 0/3 0.0/s elapsed 0:00 ETA ?
        >>> for done in (1, 2, 3):  # doctest: +ELLIPSIS
        ...     bar.update(done)
        synth [########................] 1/3 ...
        synth [################........] 2/3 ...
        synth [########################] 3/3 ... elapsed 0:00 ETA 0:00
    """

    def __init__(self, total: int, *, desc: str = "", stream: TextIO | None = None) -> None:
        self.total, self.desc = total, desc
        self.stream = sys.stderr if stream is None else stream
        self.tty = self.stream.isatty()
        self.start = time.monotonic()
        self._last_len, self._last_print, self._last_tenth = 0, 0.0, 0
        self.update(0)

    def update(self, done: int, *, final: bool | None = None) -> None:
        """Show ``done`` items of ``total`` (``final``: the last line; default when all are)."""
        total = self.total
        final = done >= total if final is None else final
        now = time.monotonic()
        tenth = 10 * done // total if total else 10
        if not final and done:
            if self.tty and now - self._last_print < 0.1:
                return
            if not self.tty and tenth == self._last_tenth and now - self._last_print < LOG_EVERY_S:
                return
        self._last_print, self._last_tenth = now, tenth
        elapsed = now - self.start
        rate = done / elapsed if elapsed > 0 else 0.0
        # no ETA before the first item is done: nothing to estimate it from yet
        eta = "0:00" if done >= total else _clock((total - done) / rate) if rate > 0 else "?"
        width = 24
        filled = int(width * done / total) if total else width
        line = (
            f"{self.desc} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} "
            f"{rate:.1f}/s elapsed {_clock(elapsed)} ETA {eta}"
        )
        if self.tty:
            self.stream.write("\r" + line + " " * max(0, self._last_len - len(line)))
            self._last_len = len(line)
            if final:
                self.stream.write("\n")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def _simple(items: Iterable[T], total: int, desc: str, stream: TextIO) -> Iterator[T]:
    bar = ProgressBar(total, desc=desc, stream=stream)
    done = 0
    for item in items:
        yield item
        done += 1
        bar.update(done)
    if done != total:
        bar.update(done, final=True)


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
        >>> photos = ["a.jpg", "b.jpg"]
        >>> for photo in progress(photos, total=len(photos), desc="label", stream=sys.stdout):
        ...     print("read", photo)  # doctest: +ELLIPSIS
        label [........................] 0/2 0.0/s elapsed 0:00 ETA ?
        read a.jpg
        label [############............] 1/2 ...
        read b.jpg
        label [########################] 2/2 ...
    """
    if not enabled:
        yield from items
        return
    stream = sys.stderr if stream is None else stream
    if stream.isatty():  # off a terminal tqdm would log each redraw, ten a second
        try:
            from tqdm import tqdm
        except ImportError:
            pass
        else:
            yield from tqdm(items, total=total, desc=desc, file=stream, unit="photo")
            return
    yield from _simple(items, total, desc, stream)
