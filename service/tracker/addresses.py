"""The client address a tracker request counts under, for :mod:`service.tracker.throttle`.

The address is ``request.client.host`` as uvicorn gives it (it takes ``X-Forwarded-For`` only
from the addresses in its ``FORWARDED_ALLOW_IPS``, by default a reverse proxy on this machine);
an IPv6 address counts with its /64 (one home's or server's block). A service mounting the
tracker (``dicecam serve``) logs the camera page's players in through the tracker's API from its
own address: it relays its client's address in :data:`RELAY_ADDRESS_HEADER`, counted only beside
:data:`RELAY_KEY_HEADER` carrying the key the tracker made at start (``app.state.relay_key``,
random, never logged; compared in constant time).
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets

from starlette.requests import Request

__all__ = [
    "RELAY_ADDRESS_HEADER",
    "RELAY_KEY_HEADER",
    "client_address",
    "new_relay_key",
    "relay_headers",
]

RELAY_ADDRESS_HEADER = "X-Dicecam-Relayed-Client"
"""The address of the client a service mounting the tracker logs in for."""

RELAY_KEY_HEADER = "X-Dicecam-Relay-Key"
"""The tracker's relay key, without which :data:`RELAY_ADDRESS_HEADER` is not heeded."""


def new_relay_key() -> str:
    """A tracker's relay key: 256 random bits, made at its start."""
    return secrets.token_urlsafe(32)


def relay_headers(key: str, host: str | None) -> dict[str, str]:
    """The headers with which a service's request to its mounted tracker (whose relay key is
    ``key``) counts under the address ``host`` of the service's own client; none without one."""
    return {RELAY_ADDRESS_HEADER: host, RELAY_KEY_HEADER: key} if host else {}


def _relayed_host(request: Request) -> str | None:
    """The address :data:`RELAY_ADDRESS_HEADER` names when :data:`RELAY_KEY_HEADER` carries the
    relay key of the app serving ``request``; else None."""
    app = request.scope.get("app")
    key: str | None = getattr(getattr(app, "state", None), "relay_key", None)
    given = request.headers.get(RELAY_KEY_HEADER) if key else None
    if not key or given is None:
        return None
    if not hmac.compare_digest(given.encode("latin-1"), key.encode("latin-1")):
        return None
    return request.headers.get(RELAY_ADDRESS_HEADER) or None


def client_address(request: Request) -> str:
    """The address a request counts under: its client's IP address (an IPv6 one's /64 block,
    an IPv4-mapped one as IPv4), or the client's name as given; ``unknown`` without one (a Unix
    socket). The client is the one a mounting service relays, with the relay key."""
    host = _relayed_host(request) or (request.client.host if request.client else "")
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host or "unknown"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)
