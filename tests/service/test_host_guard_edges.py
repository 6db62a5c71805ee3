"""The Host policy at its edges: malformed Host headers are refused, an address the service is
told to listen on is served in any spelling of it, a machine's short name is served when it
listens everywhere, an allowed name written with a final dot or a path is handled as said; a
write with an Origin and no Host is cross-site; a refusal carries the security headers."""

from __future__ import annotations

import socket

import httpx
import pytest

from service.app import create_app
from service.host_guard import HostGuardMiddleware, HostPolicy, check_allowed_host
from service.settings import Settings

from dicecam_testing.servers import LiveServer


@pytest.mark.parametrize(
    "host",
    [
        "[127.0.0.1]",  # brackets hold an IPv6 address only
        "[127.0.0.1]:8000",
        "localhost:123456",  # six digits: no port
        "localhost:",
        "localhost:80x",
        "[::1",
        "",
    ],
)
def test_a_malformed_host_is_refused_even_when_it_names_loopback(host):
    assert not HostPolicy.for_bind("127.0.0.1").allows(host)


def test_the_address_listened_on_is_served_in_any_spelling_of_it():
    policy = HostPolicy.for_bind("[FE80:0:0::1]")
    assert policy.allows("[fe80::1]:8000") and policy.allows("[FE80:0::1]")
    assert not policy.allows("[fe80::2]")


def test_listening_everywhere_serves_the_machines_full_and_short_name(monkeypatch):
    monkeypatch.setattr(socket, "gethostname", lambda: "DiceBox.home.arpa.")
    policy = HostPolicy.for_bind("0.0.0.0")
    assert policy.allows("dicebox.home.arpa:8000") and policy.allows("dicebox")
    assert policy.allows("dicebox.local") and not policy.allows("otherbox")


def test_an_allowed_name_with_a_final_dot_serves_the_name_either_way():
    assert check_allowed_host(" Dice.Example.com. ") == "dice.example.com"
    policy = HostPolicy.for_bind("127.0.0.1", ["Dice.Example.com."])
    assert policy.allows("dice.example.com:8000") and policy.allows("dice.example.com.")


def test_an_allowed_name_with_a_path_is_refused_saying_so():
    with pytest.raises(ValueError, match="without a scheme or path, got 'dice.example.com/admin'"):
        check_allowed_host("dice.example.com/admin")


def test_a_write_with_an_origin_and_no_host_is_refused():
    """An HTTP/1.0 request may leave out Host: an Origin then names no Host it came to."""
    guard = HostGuardMiddleware(None, HostPolicy.for_bind("127.0.0.1"))  # type: ignore[arg-type]
    scope = {"type": "http", "method": "POST", "headers": [(b"origin", b"http://evil.example")]}
    refusal = guard.refusal(scope)
    assert refusal is not None and refusal[0] == 403
    assert "came from a page of 'http://evil.example'" in refusal[1]
    assert guard.refusal({**scope, "headers": []}) is None  # curl, the CLI: no Origin


def test_a_refusal_carries_the_security_headers(tmp_path):
    """The guard answers before the security-headers middleware: its 400 and 403 add them."""
    app = create_app(Settings(data_dir=tmp_path), tracker_app=None, submitter=None)
    with LiveServer(app) as srv, httpx.Client(base_url=srv.url, timeout=30) as c:
        rebound = c.get("/api/v1/health", headers={"Host": "rebound.evil.example"})
        cross = c.post("/api/v1/calibration", json={}, headers={"Origin": "http://evil.example"})
    for r, status in ((rebound, 400), (cross, 403)):
        assert r.status_code == status, r.text
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["x-frame-options"] == "DENY"
        assert r.headers["referrer-policy"] == "same-origin"
        assert "default-src" in r.headers["content-security-policy"]
