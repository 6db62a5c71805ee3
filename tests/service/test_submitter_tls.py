"""The service's submitter trusts its own embedded tracker's self-signed certificate at any
address it serves on (a LAN address for phones), and no other tracker's: real HTTPS servers
with a self-signed certificate of :func:`service.tls.make_certificate`."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.api.submit import TrackerSubmitter
from service.tls import make_certificate
from service.tracker_client import TrackerUnavailable

from dicecam_testing.servers import LiveServer

HOST = "127.0.0.2"  # a loopback address other than 127.0.0.1, as a LAN address would be


@pytest.fixture
def https_tracker(tracker_app, tmp_path: Path):
    """The tracker served over HTTPS at ``HOST`` with a self-signed certificate; its URL."""
    cert, key = make_certificate([HOST])
    (tmp_path / "cert.pem").write_bytes(cert)
    (tmp_path / "key.pem").write_bytes(key)
    files = {"ssl_certfile": str(tmp_path / "cert.pem"), "ssl_keyfile": str(tmp_path / "key.pem")}
    with LiveServer(tracker_app, host=HOST, **files) as server:
        yield server.url


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_the_embedded_tracker_is_trusted_at_a_lan_address_and_no_other(
    https_tracker: str, tmp_path: Path
) -> None:
    assert https_tracker.startswith(f"https://{HOST}:")
    embedded = TrackerSubmitter(tmp_path / "outbox", embedded=True)
    with embedded.client(https_tracker) as client:
        client.register("heather", "hunter2hunter2", "UTC")
        client.login("heather", "hunter2hunter2")
        assert client.me()["name"] == "heather"
    remote = TrackerSubmitter(tmp_path / "outbox", embedded=False)
    with (
        remote.client(https_tracker) as client,
        pytest.raises(TrackerUnavailable, match="CERTIFICATE_VERIFY_FAILED"),
    ):
        client.login("heather", "hunter2hunter2")
