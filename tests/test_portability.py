"""dicecam on Windows and macOS, with any locale: what Linux can simulate of them.

The outbox's lock without ``fcntl`` (Windows' ``msvcrt.locking``, stood in for by flock here),
a console that cannot print every name (cp1252, ASCII), photos and folders named in other
scripts or with spaces, and files edited on Windows (CRLF line ends, a UTF-8 byte order mark).
"""

from __future__ import annotations

import errno
import fcntl
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from service.tracker_client.outbox import Outbox, OutboxEntry
from vision.atomic import file_lock

pytestmark = pytest.mark.skipif(os.name != "posix", reason="simulates Windows on POSIX")


class FakeMsvcrt:
    """Windows' ``msvcrt.locking`` as documented, on flock: ``LK_LOCK`` tries a few times (ten,
    a second apart, on Windows) and then raises OSError; the lock is of the bytes from the
    file's position, so the position must be where the lock was taken when it is let go."""

    LK_UNLCK, LK_LOCK = 0, 1

    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def locking(self, fd: int, mode: int, nbytes: int) -> None:
        self.calls.append((mode, os.lseek(fd, 0, os.SEEK_CUR)))
        assert nbytes == 1
        if mode == self.LK_UNLCK:
            fcntl.flock(fd, fcntl.LOCK_UN)
            return
        for _ in range(3):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                time.sleep(0.05)
        raise OSError(errno.EDEADLK, "Resource deadlock avoided")


def _two_writers(lock) -> list[str]:
    """What two threads did, each holding ``lock()`` for a while (the first 0.4 s)."""
    events: list[str] = []
    first_in = threading.Event()

    def hold(name: str, seconds: float) -> None:
        with lock():
            events.append(f"{name} in")
            first_in.set()
            time.sleep(seconds)
            events.append(f"{name} out")

    first = threading.Thread(target=hold, args=("first", 0.4))
    first.start()
    assert first_in.wait(10)
    second = threading.Thread(target=hold, args=("second", 0.0))
    second.start()
    first.join(10)
    second.join(10)
    return events


def test_the_outbox_lock_serialises_writers_where_there_is_no_fcntl(tmp_path, monkeypatch):
    fake = FakeMsvcrt()
    monkeypatch.setitem(sys.modules, "fcntl", None)  # import fcntl: ImportError, as on Windows
    monkeypatch.setitem(sys.modules, "msvcrt", fake)
    box = Outbox(tmp_path / "outbox")
    events = _two_writers(box._locked)
    assert events == ["first in", "first out", "second in", "second out"]
    # the second writer waited past LK_LOCK's giving up, and every lock was let go at byte 0
    assert fake.calls.count((fake.LK_LOCK, 0)) >= 2
    assert fake.calls.count((fake.LK_UNLCK, 0)) == 2
    assert {pos for _, pos in fake.calls} == {0}
    box.put(OutboxEntry("k1", "http://t", {"score": 50}))
    assert [e.key for e in box.entries("pending")] == ["k1"]


HOLD = """
import sys, time
from vision.atomic import file_lock
with file_lock(sys.argv[1]):
    print("in", flush=True)
    time.sleep(float(sys.argv[2]))
    print("out", flush=True)
"""


def test_file_lock_serialises_two_processes(tmp_path):
    lock = tmp_path / "dir ü" / ".lock"
    lock.parent.mkdir()
    repo = Path(__file__).resolve().parents[1]
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(lock), "0.6"],
        cwd=repo,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "in\n"
        t0 = time.monotonic()
        with file_lock(lock):
            waited = time.monotonic() - t0
        assert holder.stdout.readline() == "out\n"  # said before it let go
    finally:
        holder.wait(10)
    assert waited > 0.3
