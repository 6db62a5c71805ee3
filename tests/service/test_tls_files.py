"""``serve --https``'s certificate and key: a process killed while writing them, or between
the two files, must not stop every later start."""

from __future__ import annotations

import os
import signal
import ssl
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from service.tls import CERT_NAME, KEY_NAME, ensure_certificate, make_certificate

REPO = Path(__file__).resolve().parents[2]


def _loads(cert: Path, key: Path) -> None:
    """What uvicorn does with them at start (raises ssl.SSLError when they do not go together)."""
    ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(cert, key)


@pytest.mark.skipif(os.name != "posix", reason="RLIMIT_FSIZE and SIGXFSZ are POSIX")
def test_a_start_killed_while_writing_the_key_leaves_a_pair_that_loads(tmp_path: Path):
    cert, key = ensure_certificate(tmp_path)
    old = cert.read_bytes(), key.read_bytes()
    # a new address: the pair is made again, and the process dies writing the key
    code = f"""
        import resource, signal
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100))
        from service.tls import ensure_certificate
        ensure_certificate({str(tmp_path)!r}, ["dice.example"])
    """
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == -signal.SIGXFSZ, done.stderr
    assert (cert.read_bytes(), key.read_bytes()) == old
    _loads(*ensure_certificate(tmp_path))


def test_a_key_that_does_not_go_with_the_certificate_is_made_again(tmp_path: Path):
    """Killed between the two files: the new key beside the old certificate."""
    cert, key = ensure_certificate(tmp_path)
    key.write_bytes(make_certificate(["localhost"])[1])
    with pytest.raises(ssl.SSLError):
        _loads(cert, key)
    cert, key = ensure_certificate(tmp_path)
    _loads(cert, key)
    assert key.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("name", [KEY_NAME, CERT_NAME])
def test_a_half_written_file_is_made_again(tmp_path: Path, name: str):
    ensure_certificate(tmp_path)
    broken = tmp_path / name
    broken.write_bytes(broken.read_bytes()[:90])
    _loads(*ensure_certificate(tmp_path))


def test_serve_names_a_data_dir_it_cannot_write_the_certificate_to(tmp_path: Path):
    data = tmp_path / "data"
    data.mkdir()
    (data / KEY_NAME).mkdir()  # the key cannot be written there, even as root
    env = {"DICECAM_DATA_DIR": str(data)}
    code = "import sys; from service.cli import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run(
        [sys.executable, "-c", code, "serve", "--https", "--port", "0"],
        env={**os.environ, **env, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "cannot make the TLS certificate in" in done.stderr
    assert "Traceback" not in done.stderr
