"""`dicecam serve` as a user runs it: a real process, plain HTTP and --https with its own cert."""

from __future__ import annotations

import os
import signal
import ssl
import stat
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from dicecam_testing.servers import bound_socket, wait_listening

REPO = Path(__file__).resolve().parents[2]


def serve(tmp_path: Path, *args: str) -> tuple[subprocess.Popen, int]:
    """``dicecam serve`` on a free port, held by this process until the server listens on it
    (or ends): no test process beside can take it meanwhile."""
    held = bound_socket()
    port = held.getsockname()[1]
    env = {**os.environ, "HOME": str(tmp_path), "PYTHONUNBUFFERED": "1"}
    with held:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "service.cli",
                "serve",
                "--port",
                str(port),
                "--data-dir",
                str(tmp_path / "data"),
                *args,
            ],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        wait_listening(proc, port)
    return proc, port


def wait_up(proc: subprocess.Popen, url: str, **kw) -> httpx.Response:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"dicecam serve exited {proc.returncode}: {proc.stdout.read()}")
        try:
            return httpx.get(url, timeout=5, **kw)
        except httpx.TransportError:
            time.sleep(0.2)
    raise AssertionError("dicecam serve did not answer within 60 s")


def stop(proc: subprocess.Popen) -> str:
    proc.terminate()
    try:
        out, _ = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
    return out


def test_serve_plain_http_with_the_embedded_tracker(tmp_path):
    proc, port = serve(tmp_path)
    try:
        r = wait_up(proc, f"http://127.0.0.1:{port}/api/v1/health")
        assert r.json()["status"] == "ok" and r.json()["tracker"] == "embedded"
        assert "<video" in httpx.get(f"http://127.0.0.1:{port}/", timeout=30).text
        assert (
            httpx.get(f"http://127.0.0.1:{port}/tracker/api/v1/rounds", timeout=30).status_code
            == 200
        )
        assert (
            "/api/v1/turns"
            in httpx.get(f"http://127.0.0.1:{port}/openapi.json", timeout=30).json()["paths"]
        )
    finally:
        out = stop(proc)
    assert f"serving http://127.0.0.1:{port}/" in out
    assert (tmp_path / "data" / "tracker.sqlite3").is_file()


@pytest.mark.parametrize("signum", ["SIGTERM", "SIGHUP"])
def test_serve_shuts_down_gracefully_and_at_once_on_sigterm(tmp_path, signum):
    """uvicorn handles SIGTERM itself (dicecam's other commands take it as Ctrl-C): the app's
    shutdown runs, then uvicorn ends the process by the signal, as kill and systemd expect. A
    hang-up (the terminal closed) is taken as SIGTERM: uvicorn does not handle it, and it
    killed the server without its shutdown."""
    if not hasattr(signal, signum):
        pytest.skip(f"no {signum} on this platform")
    proc, port = serve(tmp_path)
    try:
        wait_up(proc, f"http://127.0.0.1:{port}/api/v1/health")
        start = time.monotonic()
        proc.send_signal(getattr(signal, signum))
        out, _ = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert time.monotonic() - start < 5
    assert proc.returncode == -signal.SIGTERM, out
    assert "Application shutdown complete." in out and "Traceback" not in out
    assert "interrupted" not in out


def test_serve_https_makes_a_self_signed_certificate_and_serves_tls(tmp_path):
    proc, port = serve(tmp_path, "--https", "--host", "127.0.0.1", "--no-tracker")
    cert = tmp_path / "data" / "dicecam-cert.pem"
    key = tmp_path / "data" / "dicecam-key.pem"
    try:
        ctx = ssl.create_default_context()
        deadline = time.monotonic() + 60
        while not cert.is_file() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.2)
        ctx.load_verify_locations(cert)  # verifies: the certificate names 127.0.0.1
        r = wait_up(proc, f"https://127.0.0.1:{port}/api/v1/health", verify=ctx)
        assert r.json()["tracker"] is None
        assert (
            httpx.get(f"https://127.0.0.1:{port}/tracker/", verify=ctx, timeout=30).status_code
            == 404
        )
    finally:
        out = stop(proc)
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert f"serving https://127.0.0.1:{port}/" in out
    first = cert.read_bytes()
    # a second start reuses the certificate (the phone accepted it once)
    proc, port = serve(tmp_path, "--https", "--host", "127.0.0.1", "--no-tracker")
    try:
        wait_up(proc, f"https://127.0.0.1:{port}/api/v1/health", verify=ctx)
    finally:
        stop(proc)
    assert cert.read_bytes() == first


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["serve", "--tracker-url", "ftp://x"], {}, "--tracker-url must start with http://"),
        (["serve", "--max-upload-mb", "0"], {}, "--max-upload-mb must be positive"),
        (["serve", "--max-upload-mb", "nan"], {}, "--max-upload-mb must be positive"),
        (["serve", "--port", "70000"], {}, "--port must be 0 to 65535"),
        (["tracker", "--port", "70000"], {}, "--port must be 0 to 65535"),
        # settings out of range were taken (a port uvicorn wrapped, a limit of -1 MB refusing
        # every upload) or crashed (nan)
        (["serve"], {"DICECAM_PORT": "99999"}, "DICECAM_PORT: Input should be less than"),
        (["serve"], {"DICECAM_MAX_UPLOAD_MB": "nan"}, "DICECAM_MAX_UPLOAD_MB: Input should be"),
        (["serve"], {"DICECAM_MAX_UPLOAD_MB": "-1"}, "DICECAM_MAX_UPLOAD_MB: Input should be"),
        (["serve"], {"DICECAM_OUTBOX_RETRY_S": "-5"}, "DICECAM_OUTBOX_RETRY_S: Input should be"),
        (["serve"], {"DICECAM_LIVE_SETTLE_FRAMES": "0"}, "DICECAM_LIVE_SETTLE_FRAMES: Input"),
        (["serve", "--port", "0"], {"DICECAM_DATA_DIR": "/dev/null/d"}, "cannot use the data dir"),
        # a wrong model served "ok" until the first photo's 503
        (["serve", "--model", "/no/x-ft.onnx"], {}, "--model must be the reader's ONNX export"),
        (["serve"], {"DICECAM_MODEL": "/no/x-ft.onnx"}, "DICECAM_MODEL must be the reader's ONNX"),
        (
            ["tracker", "--database-url", "sqlite:////dev/null/d/t.db"],
            {},
            "cannot open the tracker database",
        ),
        (
            ["serve", "--port", "0"],
            {"DICECAM_TRACKER_ADMIN_NAME": "<bad>", "DICECAM_TRACKER_ADMIN_PASSWORD": "short"},
            "DICECAM_TRACKER_ADMIN_NAME, _PASSWORD or _TIMEZONE: 'name': expected a name",
        ),
    ],
)
def test_serve_usage_errors_exit_2_with_one_line(tmp_path, args, env, message):
    proc = subprocess.run(
        [sys.executable, "-m", "service.cli", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "DICECAM_DATA_DIR": str(tmp_path), **env},
    )
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert "'short'" not in proc.stderr  # a password is never echoed


@pytest.mark.parametrize(
    ("args", "env", "host"),
    [
        (["--https"], {}, "0.0.0.0"),  # for phones
        (["--https", "--host", "127.0.0.1"], {}, "127.0.0.1"),
        # DICECAM_HOST counts as given, as for every other option (--https took 0.0.0.0)
        (["--https"], {"DICECAM_HOST": "127.0.0.1"}, "127.0.0.1"),
        ([], {}, "127.0.0.1"),
    ],
)
def test_serve_https_listens_on_every_address_unless_told_a_host(
    tmp_path, monkeypatch, args, env, host
):
    import uvicorn

    from service.cli import main

    monkeypatch.delenv("DICECAM_HOST", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr("service.tls.lan_addresses", lambda: [])
    ran: dict = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: ran.update(kw))
    data = ["--data-dir", str(tmp_path / "data"), "--no-tracker", "--port", "0"]
    assert main(["serve", *data, *args]) == 0
    assert ran["host"] == host


def test_serve_model_is_the_reader_it_loads_and_health_names_it_before_the_first_photo(tmp_path):
    """A fine-tuned model is served with --model (as `dicecam read --model`); health named no
    model until a photo loaded the reader, so a player could not tell which one would read."""
    import io

    import numpy as np
    from PIL import Image

    from dicecam_testing.onnx_models import make_model, raw_preds

    model = make_model(tmp_path / "mine-ft.onnx", raw_preds([(160, 160, 40, 40, {2: 0.9})]))
    proc, port = serve(tmp_path, "--no-tracker", "--model", str(model))
    url = f"http://127.0.0.1:{port}"
    try:
        reader = wait_up(proc, url + "/api/v1/health").json()["reader"]
        assert reader["configured_model"] == str(model) and reader["loaded"] is False
        photo = io.BytesIO()
        Image.fromarray(np.full((320, 320, 3), 90, np.uint8)).save(photo, "JPEG")
        files = {"photo": ("a.jpg", photo.getvalue(), "image/jpeg")}
        r = httpx.post(url + "/api/v1/read", files=files, timeout=60)
        assert r.status_code == 200, r.text
        assert [d["value"] for d in r.json()["dice"]] == [3]
        reader = httpx.get(url + "/api/v1/health", timeout=30).json()["reader"]
        assert reader["model"] == str(model) == reader["configured_model"]
    finally:
        stop(proc)


@pytest.mark.parametrize(
    ("variable", "what"),
    [
        ("DICECAM_FACES_MODEL", "face classifier"),
        ("DICECAM_VERIFY_MODEL", "die check"),
        ("DICECAM_SURFACE_MODEL", "surface model"),
        ("DICECAM_OFFTABLE_MODEL", "off-table model"),
    ],
)
def test_serve_refuses_at_start_a_model_variable_naming_a_file_that_does_not_load(
    variable, what, tmp_path, monkeypatch, capsys
):
    """A cut file named by a model variable beside the reader's stopped every photo with a 503
    while the service looked well; `serve` now loads it at start and names the variable."""
    import service.cli.serve
    from service.cli import main

    def served(*args, **kwargs):
        raise AssertionError("the server started")

    monkeypatch.setattr(service.cli.serve, "run_uvicorn", served)
    cut = tmp_path / "cut.onnx"
    cut.write_bytes((REPO / "models" / "dicecam-reader-faces.onnx").read_bytes()[:2000])
    monkeypatch.setenv(variable, str(cut))
    monkeypatch.setenv("HOME", str(tmp_path))
    assert main(["serve", "--port", "0", "--data-dir", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err.strip()
    assert f"cannot load {what} {cut}" in err and err.endswith(f"(named by {variable})"), err
    assert len(err.splitlines()) == 1
