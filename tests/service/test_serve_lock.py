"""One ``dicecam serve`` per data folder: a second one on the same folder is refused at its
start, naming the first; a server that was killed leaves no lock behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from service.cli import UsageError
from service.cli._serve_lock import serve_lock
from service.cli.serve import lock_files
from service.settings import Settings

from dicecam_testing.servers import bound_socket, wait_listening

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock is POSIX only")


def _cmd(data: Path, port: int, *args: str) -> list[str]:
    return [sys.executable, "-m", "service.cli", "serve", "--no-tracker", "--port", str(port),
            "--data-dir", str(data), *args]  # fmt: skip


def _env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(tmp_path), "PYTHONUNBUFFERED": "1"}


def _start(tmp_path: Path, data: Path) -> tuple[subprocess.Popen, int]:
    held = bound_socket()
    port = held.getsockname()[1]
    with held:
        proc = subprocess.Popen(
            _cmd(data, port), cwd=REPO, env=_env(tmp_path), text=True,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )  # fmt: skip
        wait_listening(proc, port)
    return proc, port


def _second(tmp_path: Path, data: Path) -> subprocess.CompletedProcess:
    with bound_socket() as free:  # a port of its own: only the folder is shared
        port = free.getsockname()[1]
    return subprocess.run(
        _cmd(data, port), cwd=REPO, env=_env(tmp_path), capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip


def test_a_second_server_on_the_same_data_folder_is_refused_naming_the_first(tmp_path):
    data = tmp_path / "data"
    first, port = _start(tmp_path, data)
    try:
        assert httpx.get(f"http://127.0.0.1:{port}/api/v1/health", timeout=30).status_code == 200
        second = _second(tmp_path, data)
        assert second.returncode == 2, second.stdout + second.stderr
        message = second.stderr
        assert f"another dicecam serve (pid {first.pid}, http://127.0.0.1:{port}/)" in message
        assert str(data) in message and "--data-dir" in message
        assert "Traceback" not in message and "serving" not in second.stdout
        # the first is untouched: it still answers, and its lock still names it
        assert httpx.get(f"http://127.0.0.1:{port}/api/v1/health", timeout=30).status_code == 200
        assert (data / "serve.lock").read_text() == f"{first.pid} http://127.0.0.1:{port}/\n"
        # another folder is no trouble
        other = subprocess.Popen(
            _cmd(tmp_path / "other", 0), cwd=REPO, env=_env(tmp_path), text=True,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        )  # fmt: skip
        try:
            lines = [other.stdout.readline() for _ in range(3)]
            assert any("serving http://127.0.0.1:" in line for line in lines), lines
        finally:
            other.kill()
            other.communicate()
    finally:
        first.kill()  # killed, not stopped: the system lets go of the lock with the process
        first.communicate()
    again, port = _start(tmp_path, data)
    try:
        assert httpx.get(f"http://127.0.0.1:{port}/api/v1/health", timeout=30).status_code == 200
    finally:
        again.terminate()
        again.communicate(timeout=30)


def test_the_lock_is_held_for_the_block_and_names_what_holds_it(tmp_path):
    lock = tmp_path / "serve.lock"
    with serve_lock([lock, lock]) as note:  # the same file twice is held once
        note("http://127.0.0.1:8123/")
        refused = pytest.raises(UsageError, match=r"pid \d+, http://127\.0\.0\.1:8123/\)")
        with refused, serve_lock([tmp_path / "other.lock", lock]):
            pass
        assert _free(tmp_path / "other.lock")  # taken before the refusal, and let go of
    with serve_lock([lock]):  # free again once the block ended
        pass


def _free(path: Path) -> bool:
    with serve_lock([path]):
        return True


def test_a_turns_file_elsewhere_gets_a_lock_of_its_own(tmp_path):
    data = tmp_path / "data"
    assert lock_files(Settings(data_dir=data)) == [data / "serve.lock"]
    turns = tmp_path / "elsewhere" / "t.sqlite3"
    assert lock_files(Settings(data_dir=data, turns_database=turns)) == [
        data / "serve.lock",
        tmp_path / "elsewhere" / "t.sqlite3.serve.lock",
    ]
    first = lock_files(Settings(data_dir=data, turns_database=turns))
    other = lock_files(Settings(data_dir=tmp_path / "d2", turns_database=turns))
    refused = pytest.raises(UsageError, match="already uses .*elsewhere")
    with serve_lock(first), refused, serve_lock(other):
        pass


def test_a_lock_held_before_its_holder_wrote_where_it_listens_names_what_it_knows(tmp_path):
    """A server between its lock and its port check has written only its pid; a lock file
    held by a process that wrote nothing names no pid: neither shows an empty address."""
    import fcntl

    lock = tmp_path / "serve.lock"
    with serve_lock([lock]), pytest.raises(UsageError) as refused, serve_lock([lock]):
        pass  # the first's address not written yet
    said = str(refused.value)
    assert f"another dicecam serve (pid {os.getpid()}) already uses {tmp_path} " in said
    empty = tmp_path / "empty" / "serve.lock"
    empty.parent.mkdir()
    with open(empty, "w") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(UsageError) as refused, serve_lock([empty]):
            pass
    assert str(refused.value).startswith(f"another dicecam serve already uses {empty.parent} ")
