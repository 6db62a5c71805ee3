"""``dicecam serve`` and ``dicecam tracker`` up to uvicorn's start, in this process (uvicorn's
``run`` replaced by one that notes what it was given): the address a player is told, the
certificate's names, the exit status when uvicorn stops at its start, and SIGHUP's handler."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

from service.cli import main


@pytest.fixture
def ran(monkeypatch) -> dict:
    """What uvicorn.run was given (``host``, ``port``, ...), and SIGHUP's handler meanwhile."""
    import uvicorn

    seen: dict = {}

    def run(app, **config) -> None:
        seen.update(config, hangup=signal.getsignal(signal.SIGHUP) if HANGUP else None)

    monkeypatch.setattr(uvicorn, "run", run)
    monkeypatch.delenv("DICECAM_HOST", raising=False)
    monkeypatch.setattr("service.tls.lan_addresses", lambda: ["192.0.2.7"])
    return seen


HANGUP = hasattr(signal, "SIGHUP")


def _serve(tmp_path: Path, *args: str) -> int:
    return main(["serve", "--data-dir", str(tmp_path / "data"), "--no-tracker", *args])


def test_https_on_every_address_tells_the_address_a_browser_can_open(tmp_path, ran, capsys):
    """0.0.0.0 is no address to open: the line, the lock and the phone's line name real ones."""
    assert _serve(tmp_path, "--https", "--port", "0") == 0
    port = ran["port"]
    assert ran["host"] == "0.0.0.0" and port != 0
    out = capsys.readouterr().out
    assert f"dicecam: serving https://127.0.0.1:{port}/\n" in out
    assert f"open https://192.0.2.7:{port}/" in out
    assert "0.0.0.0" not in out


def test_https_on_a_host_of_its_own_has_a_certificate_naming_it(tmp_path, ran):
    """``--https --host 127.0.0.2``: a certificate without that address was refused by every
    browser opening https://127.0.0.2:PORT/."""
    from cryptography import x509

    if sys.platform != "linux":
        pytest.skip("127.0.0.0/8 is all this machine's on Linux only")
    assert _serve(tmp_path, "--https", "--host", "127.0.0.2", "--port", "0") == 0
    assert ran["host"] == "127.0.0.2"
    cert = x509.load_pem_x509_certificate(Path(ran["ssl_certfile"]).read_bytes())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "127.0.0.2" in {str(ip) for ip in names.get_values_for_type(x509.IPAddress)}


@pytest.mark.parametrize(("code", "status"), [(3, 1), (None, 0)])
def test_uvicorn_stopping_at_its_start_is_a_failure(tmp_path, monkeypatch, code, status):
    """uvicorn exits 3 when it cannot start after all (its log says why): so does not 0."""
    import uvicorn

    def run(app, **config) -> None:
        raise SystemExit(code)

    monkeypatch.setattr(uvicorn, "run", run)
    assert _serve(tmp_path, "--port", "0") == status


@pytest.mark.skipif(not HANGUP, reason="no SIGHUP on Windows")
def test_a_hangup_stops_the_server_as_sigterm_while_it_serves_and_only_then(tmp_path, ran):
    before = signal.getsignal(signal.SIGHUP)
    assert _serve(tmp_path, "--port", "0") == 0
    assert ran["hangup"] not in (before, signal.SIG_DFL, signal.SIG_IGN)  # a handler of its own
    assert signal.getsignal(signal.SIGHUP) == before  # put back after


@pytest.mark.parametrize(("host", "shown"), [("0.0.0.0", "127.0.0.1"), ("127.0.0.2", None)])
def test_the_tracker_listens_on_the_host_given_and_names_one_to_open(
    tmp_path, ran, capsys, monkeypatch, host, shown
):
    monkeypatch.setenv("DICECAM_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DICECAM_TRACKER_ADMIN_PASSWORD", "")
    database = f"sqlite:///{tmp_path / 't.sqlite3'}"
    assert main(["tracker", "--host", host, "--port", "0", "--database-url", database]) == 0
    assert ran["host"] == host
    said = f"dicecam: serving the tracker at http://{shown or host}:{ran['port']}/\n"
    assert said in capsys.readouterr().out


@pytest.mark.parametrize("command", ["serve", "tracker"])
def test_port_0_is_a_free_port_over_the_port_setting(tmp_path, ran, monkeypatch, command):
    """``--port 0`` beside ``DICECAM_PORT`` (here a port in use): 0 was taken for no port
    given, and the server went to the setting's port (or 8000) instead of a free one."""
    from dicecam_testing.servers import bound_socket

    monkeypatch.setenv("DICECAM_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("DICECAM_TRACKER_ADMIN_PASSWORD", "")
    extra = {"serve": ["--no-tracker"], "tracker": ["--database-url", f"sqlite:///{tmp_path}/t.db"]}
    with bound_socket() as taken:
        taken.listen()
        monkeypatch.setenv("DICECAM_PORT", str(taken.getsockname()[1]))
        assert main([command, "--port", "0", *extra[command]]) == 0
        assert ran["port"] not in (0, taken.getsockname()[1], 8000)
