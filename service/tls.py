"""A self-signed TLS certificate for ``dicecam serve --https`` (phones allow the camera on HTTPS).

Example:
    >>> import tempfile
    >>> folder = tempfile.TemporaryDirectory()  # dicecam serve --https: the data folder
    >>> cert, key = ensure_certificate(Path(folder.name))
    >>> cert.name, key.name, oct(key.stat().st_mode & 0o777)
    ('dicecam-cert.pem', 'dicecam-key.pem', '0o600')
    >>> ensure_certificate(Path(folder.name)) == (cert, key)  # kept while it is valid
    True
    >>> folder.cleanup()
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import socket
from pathlib import Path

from vision.atomic import atomic_write

__all__ = ["ensure_certificate", "lan_addresses", "make_certificate"]

CERT_NAME = "dicecam-cert.pem"
KEY_NAME = "dicecam-key.pem"


def lan_addresses() -> list[str]:
    """This machine's IPv4 addresses a phone on the same network may reach (best effort)."""
    found: list[str] = []
    try:  # the address of the default route, without sending anything
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("10.255.255.255", 1))
            found.append(s.getsockname()[0])
    except OSError:
        pass
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
            found.append(str(info[4][0]))
    except OSError:
        pass
    return [a for a in dict.fromkeys(found) if not a.startswith("127.")]


def make_certificate(hosts: list[str], days: int = 825) -> tuple[bytes, bytes]:
    """A self-signed certificate (PEM) and its EC P-256 key (PEM) valid for ``hosts``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "dicecam")])
    alt: list[x509.GeneralName] = []
    for h in dict.fromkeys(hosts):
        try:
            alt.append(x509.IPAddress(ipaddress.ip_address(h)))
        except ValueError:
            alt.append(x509.DNSName(h))
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=days))
        .add_extension(x509.SubjectAlternativeName(alt), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return cert_pem, key_pem


def _usable(cert_path: Path, key_path: Path, hosts: list[str]) -> bool:
    """Whether the certificate is fresh, names every host, and goes with the key file (a
    process killed between writing the two, or a half-written file, would stop every start)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
        alt = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
        ours = key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        theirs = cert.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    except Exception:
        return False
    names = {str(v) for v in alt.get_values_for_type(x509.IPAddress)}
    names |= set(alt.get_values_for_type(x509.DNSName))
    expires = cert.not_valid_after_utc
    fresh = expires > dt.datetime.now(dt.UTC) + dt.timedelta(days=1)
    return fresh and set(hosts) <= names and ours == theirs


def ensure_certificate(data_dir: Path, extra_hosts: list[str] | None = None) -> tuple[Path, Path]:
    """Certificate and key files in ``data_dir``, made (or remade) when missing, unreadable,
    expired, not valid for this machine's current addresses or not of the same pair. The key
    file is readable by its owner only.

    Raises:
        OSError: the files cannot be written (a read-only or full data dir); the old ones stay.
    """
    hosts = ["localhost", "127.0.0.1", socket.gethostname(), *lan_addresses(), *(extra_hosts or [])]
    hosts = [h for h in dict.fromkeys(hosts) if h and h not in ("0.0.0.0", "::")]
    data_dir = Path(data_dir).expanduser()
    data_dir.mkdir(parents=True, exist_ok=True)
    cert_path, key_path = data_dir / CERT_NAME, data_dir / KEY_NAME
    if cert_path.is_file() and key_path.is_file() and _usable(cert_path, key_path, hosts):
        return cert_path, key_path
    cert_pem, key_pem = make_certificate(hosts)
    # each file whole or not at all; a kill between the two leaves a pair that does not go
    # together, which the next start sees (_usable) and makes again
    atomic_write(key_path, key_pem, mode=0o600)
    key_path.chmod(0o600)
    atomic_write(cert_path, cert_pem)
    return cert_path, key_path
