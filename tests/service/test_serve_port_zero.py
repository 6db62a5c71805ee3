"""``dicecam serve --port 0`` and ``dicecam tracker --port 0``: the system picks a free port, and
the line the server prints names that port (it said ``http://127.0.0.1:0/``; ``dicecam
tracker`` said nothing at all). Real processes, answered on the port they name."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from dicecam_testing.waiting import wait_for

REPO = Path(__file__).resolve().parents[2]


def _first_line(proc: subprocess.Popen, timeout: float = 60) -> str:
    """The server's first line on stdout (printed before uvicorn starts), or a failure after
    ``timeout`` seconds without one."""
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if not ready:
        raise AssertionError(f"no line on stdout in {timeout} s")
    line = proc.stdout.readline()
    if not line:
        proc.wait(timeout=10)
        raise AssertionError(f"exited {proc.returncode}: {proc.stderr.read()}")
    return line


@pytest.mark.parametrize(
    ("command", "says", "route"),
    [
        (["serve", "--no-tracker"], "dicecam: serving http://", "/api/v1/health"),
        (["tracker"], "dicecam: serving the tracker at http://", "/api/v1/rounds"),
    ],
)
def test_port_0_serves_on_a_free_port_and_says_which(tmp_path, command, says, route):
    env = {**os.environ, "DICECAM_DATA_DIR": str(tmp_path), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "service.cli", *command, "--port", "0"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = _first_line(proc)
        match = re.fullmatch(re.escape(says) + r"127\.0\.0\.1:(\d+)/\n", line)
        assert match, line
        port = int(match[1])
        assert port != 0
        answers: list[httpx.Response] = []

        def answered() -> bool:
            """the server answers on the port it named"""
            assert proc.poll() is None, proc.stderr.read()
            try:
                answers.append(httpx.get(f"http://127.0.0.1:{port}{route}", timeout=5))
            except httpx.ConnectError:
                return False
            return True

        wait_for(answered, timeout=30, poll=0.05)  # the app starts after the line
        (r,) = answers
        assert r.status_code == 200, r.text
    finally:
        proc.terminate()
        proc.communicate(timeout=20)
