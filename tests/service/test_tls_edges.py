"""``serve --https``'s certificate at its edges: when it is made again, what it names and how
long it lasts, and who may read its key."""

from __future__ import annotations

import datetime as dt
import socket
from pathlib import Path

import pytest
from cryptography import x509

from service.tls import CERT_NAME, KEY_NAME, ensure_certificate, lan_addresses, make_certificate


def _cert(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def _names(cert: x509.Certificate) -> set[str]:
    alt = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return {str(v) for v in alt.get_values_for_type(x509.IPAddress)} | set(
        alt.get_values_for_type(x509.DNSName)
    )


def _pair_valid_for(folder: Path, days: int) -> bytes:
    """Replace the pair in ``folder`` by one for the same names lasting ``days``."""
    names = sorted(_names(_cert(folder / CERT_NAME)))
    cert_pem, key_pem = make_certificate(names, days=days)
    (folder / CERT_NAME).write_bytes(cert_pem)
    (folder / KEY_NAME).write_bytes(key_pem)
    return cert_pem


def test_a_certificate_expiring_within_a_day_is_made_again_and_one_of_two_days_is_kept(
    tmp_path: Path,
):
    ensure_certificate(tmp_path)
    kept = _pair_valid_for(tmp_path, days=2)
    ensure_certificate(tmp_path)
    assert (tmp_path / CERT_NAME).read_bytes() == kept
    expiring = _pair_valid_for(tmp_path, days=1)  # still valid now, not tomorrow
    cert, _ = ensure_certificate(tmp_path)
    assert cert.read_bytes() != expiring
    assert _cert(cert).not_valid_after_utc > dt.datetime.now(dt.UTC) + dt.timedelta(days=800)


def test_a_new_certificate_lasts_825_days_from_five_minutes_ago_and_is_no_ca():
    """825 days: the most Apple's phones take for a server certificate; five minutes back for
    a phone whose clock is a little behind."""
    before = dt.datetime.now(dt.UTC)
    cert = x509.load_pem_x509_certificate(make_certificate(["localhost"])[0])
    after = dt.datetime.now(dt.UTC)
    start, end = cert.not_valid_before_utc, cert.not_valid_after_utc
    assert before - dt.timedelta(minutes=5, seconds=1) <= start <= after - dt.timedelta(minutes=5)
    assert end - start == dt.timedelta(days=825, minutes=5)
    constraints = cert.extensions.get_extension_for_class(x509.BasicConstraints)
    assert constraints.critical and constraints.value.ca is False


def test_the_certificate_names_the_extra_hosts_but_not_the_any_address(tmp_path: Path):
    cert, _ = ensure_certificate(tmp_path, ["0.0.0.0", "::", "dice.example", "192.0.2.7"])
    names = _names(_cert(cert))
    assert {"localhost", "127.0.0.1", "dice.example", "192.0.2.7"} <= names
    assert not {"0.0.0.0", "::"} & names


def test_a_key_an_older_start_left_readable_is_made_owner_only_when_remade(tmp_path: Path):
    _, key = ensure_certificate(tmp_path)
    key.chmod(0o644)
    ensure_certificate(tmp_path, ["dice.example"])  # a new name: the pair is made again
    assert key.stat().st_mode & 0o777 == 0o600


def test_the_lan_addresses_leave_out_the_loopback_ones(monkeypatch: pytest.MonkeyPatch):
    """Debian names the host 127.0.1.1 in /etc/hosts: no phone reaches that."""

    def getaddrinfo(host, port, family=0, *args):
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.1.1", 0)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("192.0.2.7", 0)),
        ]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    found = lan_addresses()
    assert "192.0.2.7" in found
    assert not [a for a in found if a.startswith("127.")]
