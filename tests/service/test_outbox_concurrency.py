"""Two processes writing one outbox at once: the service's retries of a queued turn and
``dicecam outbox deliver``. A turn one of them delivered must not vanish from the outbox, nor go
back to pending, because the other's try failed meanwhile."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from service.tracker_client.outbox import Outbox, OutboxEntry

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(os.name != "posix", reason="flock is POSIX")

# the process whose POST succeeded: it writes delivered/k, then stops just before removing
# pending/k until the test lets it go on
DELIVERED = """
    import pathlib, sys, time
    from service.tracker_client.outbox import Outbox
    box, flags = Outbox(sys.argv[1]), pathlib.Path(sys.argv[2])
    unlink = pathlib.Path.unlink
    def held(self, missing_ok=False):
        if self.parent.name == "pending":
            (flags / "paused").touch()
            while not (flags / "go").exists():
                time.sleep(0.01)
        return unlink(self, missing_ok=missing_ok)
    pathlib.Path.unlink = held
    entry = box.find("k")
    entry.state, entry.result, entry.attempts = "delivered", {"id": 7}, 1
    box.write(entry)
"""

# the process whose POST of the same turn timed out: it notes the failure on the entry it read
# while the turn was still pending
FAILED = """
    import sys
    from service.tracker_client.outbox import Outbox, OutboxEntry
    box = Outbox(sys.argv[1])
    stale = OutboxEntry("k", "http://t", {"score": 50}, attempts=1, last_error="timed out")
    box.write(stale)
"""


def _start(code: str, *args: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for(path: Path, seconds: float = 30) -> None:
    end = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < end, f"{path} never appeared"
        time.sleep(0.01)


def test_a_failure_noted_while_another_process_delivers_loses_nothing(tmp_path: Path):
    box_dir, flags = tmp_path / "outbox", tmp_path / "flags"
    flags.mkdir()
    Outbox(box_dir).put(OutboxEntry("k", "http://t", {"score": 50}))
    started = [_start(DELIVERED, box_dir, flags)]
    try:
        _wait_for(flags / "paused")
        started.append(_start(FAILED, box_dir))
        with contextlib.suppress(subprocess.TimeoutExpired):
            started[1].wait(timeout=2)  # before the fix it wrote at once; now it waits its turn
        (flags / "go").touch()
        for proc in started:
            assert proc.wait(timeout=30) == 0, proc.stderr.read()
    finally:
        for proc in started:
            if proc.poll() is None:
                proc.kill()
    entry = Outbox(box_dir).find("k")
    assert entry is not None, "the turn vanished from the outbox"
    assert (entry.state, entry.result) == ("delivered", {"id": 7})
    assert Outbox(box_dir).counts() == {"pending": 0, "delivered": 1, "rejected": 0}


def test_a_settled_turn_is_not_queued_again_by_a_stale_writer(tmp_path: Path):
    box = Outbox(tmp_path)
    box.put(OutboxEntry("k", "http://t", {"score": 50}))
    stale = box.find("k")
    settled = box.find("k")
    settled.state, settled.last_error = "rejected", "outside 8am-8pm"
    box.write(settled)
    stale.attempts, stale.last_error = 1, "timed out"
    box.write(stale)
    assert box.find("k").state == "rejected"
    assert box.counts() == {"pending": 0, "delivered": 0, "rejected": 1}
