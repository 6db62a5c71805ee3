"""Running ``dicecam`` as a real subprocess from the repository: a command's result, a folder
of many photos to keep it busy, and Ctrl-C sent to it once it has started working."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

__all__ = [
    "DICECAM",
    "ROOT",
    "SAMPLES",
    "dicecam",
    "interrupt_when",
    "many_photos",
    "run_in_process",
]

ROOT = Path(__file__).resolve().parents[3]
"""The repository."""
SAMPLES = sorted((ROOT / "datasets" / "samples").glob("*.jpg"))
DICECAM = [sys.executable, "-m", "service.cli"]


def run_in_process(capsys: Any, *argv: str) -> tuple[int, str, str]:
    """``dicecam ARGV`` in this process (``service.cli.main``): its exit status (argparse's
    SystemExit too), stdout and stderr as pytest's ``capsys`` caught them."""
    from service.cli import main

    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def dicecam(*args: str, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*DICECAM, *args], capture_output=True, text=True, timeout=60, cwd=ROOT, **kwargs
    )


def many_photos(folder: Path, copies: int) -> Path:
    """``copies`` times each sample photo, in ``folder``."""
    folder.mkdir()
    for k in range(copies):
        for photo in SAMPLES:
            shutil.copy(photo, folder / f"{k:02d}-{photo.name}")
    return folder


def interrupt_when(
    proc: subprocess.Popen, started, timeout: float = 30.0, signum: int = signal.SIGINT
) -> tuple[str, str]:
    """Ctrl-C ``proc`` (SIGINT to its process group, as a terminal does; or ``signum``: SIGTERM
    as ``kill`` sends, SIGHUP as a closing terminal) once ``started()`` holds; its stdout and
    stderr."""
    deadline = time.monotonic() + timeout
    while not started():
        assert proc.poll() is None, f"ended before it was interrupted: {proc.communicate()}"
        assert time.monotonic() < deadline, "never started working"
        time.sleep(0.05)
    os.killpg(proc.pid, signum)
    return proc.communicate(timeout=30)
