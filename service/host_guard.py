"""Refuse what a website could do with the service from a player's browser: the service has no
login (players run it at home), so any page could otherwise read and change it.

* DNS rebinding: a site rebinds its own name to this machine, and its page then talks to the
  service as a same-origin page. The request carries the site's name in ``Host``: a Host the
  service does not answer to gets 400 (Jupyter and Vite check it the same way).
* Cross-site writes: a page of another origin POSTs a form (a "simple" request, no CORS
  preflight). A POST, PUT, PATCH or DELETE whose ``Origin`` is not the Host it came to, or that
  the browser marks ``Sec-Fetch-Site: cross-site``, gets 403. Requests without these headers
  (curl, the dicecam CLI, the tracker client) are served.

Which hosts the service answers to follows the address it listens on (:meth:`HostPolicy.for_bind`)
plus ``DICECAM_ALLOWED_HOSTS``. One middleware guards the service, the tracker mounted in it, and
the standalone tracker.

Example:
    >>> policy = HostPolicy.for_bind("127.0.0.1")
    >>> policy.allows("localhost"), policy.allows("rebound.example")
    (True, False)
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from service.security_headers import HEADERS

__all__ = ["HostGuardMiddleware", "HostPolicy", "check_allowed_host", "guard_hosts"]

LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})
EVERYWHERE = frozenset({"", "0.0.0.0", "::"})
WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_NAME = re.compile(r"[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*")


def _ip(name: str) -> str | None:
    """``name`` as an IP address in its usual form, or None when it is not one."""
    try:
        return str(ipaddress.ip_address(name))
    except ValueError:
        return None


def _host_port(value: str) -> tuple[str, int | None] | None:
    """``host[:port]`` (``[v6][:port]``) as (lower-case name without a final dot, port or
    None); None when malformed."""
    value = value.strip().lower()
    if value.startswith("["):
        name, bracket, rest = value[1:].partition("]")
        if not bracket or _ip(name) is None or ":" not in name:
            return None
    else:
        name, colon, rest = value.partition(":")
        rest = colon + rest
    if rest and not (rest[0] == ":" and rest[1:].isdigit() and len(rest) <= 6):
        return None
    port = int(rest[1:]) if rest else None
    name = name.removesuffix(".")
    return (_ip(name) or name, port) if name else None


def check_allowed_host(entry: str) -> str:
    """One ``DICECAM_ALLOWED_HOSTS`` entry, normalised: a host name, an IP address, ``*.domain``
    (its subdomains) or ``*`` (any host). ValueError names what was expected and what came."""
    value = entry.strip().lower()
    if not value:
        raise ValueError(f"expected a comma list of host names, got an empty name in {entry!r}")
    if "://" in value or "/" in value:
        raise ValueError(f"expected host names without a scheme or path, got {entry!r}")
    if value == "*":
        return value
    bare = value[1:-1] if value.startswith("[") and value.endswith("]") else value
    if _ip(bare) is not None:
        return str(_ip(bare))
    if ":" in value:
        raise ValueError(f"expected host names without a port (any port is served), got {entry!r}")
    name = value.removeprefix("*.").removesuffix(".")
    if not _NAME.fullmatch(name):
        raise ValueError(f"expected a host name, an IP address, *.domain or *, got {entry!r}")
    return value.removesuffix(".")


@dataclass(frozen=True)
class HostPolicy:
    """The ``Host`` names the service answers to: ``names`` exactly, subdomains of
    ``suffixes`` (``.local``), any IP address (``any_ip``), or anything (``any_host``)."""

    names: frozenset[str]
    suffixes: tuple[str, ...] = ()
    any_ip: bool = False
    any_host: bool = False

    @classmethod
    def for_bind(cls, bind: str, allowed: Iterable[str] = ()) -> HostPolicy:
        """The defaults for a server listening on ``bind``, plus ``allowed``
        (``DICECAM_ALLOWED_HOSTS`` entries). Always ``localhost``, ``127.0.0.1`` and ``[::1]``;
        a specific address or name: that one too; ``0.0.0.0`` or ``::``: any IP address, this
        machine's host name and ``*.local`` (a rebinding site must use a name of its own)."""
        names = set(LOOPBACK)
        suffixes: list[str] = []
        bind = bind.strip().lower().removeprefix("[").removesuffix("]")
        everywhere = bind in EVERYWHERE
        if everywhere:
            me = socket.gethostname().lower().removesuffix(".")
            names |= {me, me.split(".")[0]} - {""}
            suffixes.append(".local")
        else:
            names.add(_ip(bind) or bind)
        any_host = False
        for entry in map(check_allowed_host, allowed):
            if entry == "*":
                any_host = True
            elif entry.startswith("*."):
                suffixes.append(entry[1:])
            else:
                names.add(entry)
        return cls(frozenset(names), tuple(suffixes), everywhere, any_host)

    def allows(self, host: str) -> bool:
        """Whether a request whose ``Host`` header is ``host`` (``name[:port]``, any port) is
        served."""
        if self.any_host:
            return True
        parsed = _host_port(host)
        if parsed is None:
            return False
        name = parsed[0]
        if self.any_ip and _ip(name) is not None:
            return True
        return name in self.names or name.endswith(self.suffixes)


def _same_origin(origin: str, host: str) -> bool:
    """Whether the ``Origin`` header names the ``Host`` the request came to (default ports
    80 and 443 left out; the scheme is not compared, as a TLS proxy may serve plain HTTP)."""
    scheme, sep, netloc = origin.partition("://")
    ours, theirs = _host_port(host), _host_port(netloc)
    if scheme not in ("http", "https") or not sep or ours is None or theirs is None:
        return False

    def key(hp: tuple[str, int | None]) -> tuple[str, int | None]:
        return hp[0], None if hp[1] in (80, 443) else hp[1]

    return key(ours) == key(theirs)


def _connected_to(host: str, scope: Scope) -> bool:
    """Whether ``host`` is the IP address the connection came in on (the server's own socket:
    the embedded tracker is reached so, whatever name the server was told to listen on)."""
    parsed, server = _host_port(host), scope.get("server")
    return bool(parsed and server and _ip(str(server[0])) == parsed[0])


class HostGuardMiddleware:
    """400 to a request whose ``Host`` ``policy`` does not allow; 403 to a cross-site write."""

    def __init__(self, app: ASGIApp, policy: HostPolicy) -> None:
        self.app = app
        self.policy = policy

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        """The status and sentence refusing this request, or None to serve it."""
        headers = Headers(scope=scope)
        host = headers.get("host")
        if host is not None and not self.policy.allows(host) and not _connected_to(host, scope):
            parsed = _host_port(host)
            name = parsed[0] if parsed else host
            return 400, (
                f"expected a Host this service answers to, got {name!r}: a website that "
                "rebinds its own name to this machine sends such requests. If you opened the "
                f"service at that address, start it with DICECAM_ALLOWED_HOSTS={name} "
                "(a comma list; * allows any)"
            )
        if scope["method"] not in WRITES:
            return None
        origin = headers.get("origin")
        if headers.get("sec-fetch-site") == "cross-site":
            came = "the browser marks it Sec-Fetch-Site: cross-site"
        elif origin is not None and not _same_origin(origin, host or ""):
            came = f"it came from a page of {origin!r}, not of {host!r}"
        else:
            return None
        return 403, (
            f"refused a cross-site {scope['method']}: {came}. Only the service's own pages, "
            "or clients that send no Origin (curl, the dicecam CLI), may change it"
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = self.refusal(scope) if scope["type"] == "http" else None
        if refusal is None:
            await self.app(scope, receive, send)
            return
        status, detail = refusal
        headers = {k.decode(): v.decode() for k, v in HEADERS}  # wherever the guard sits
        await JSONResponse({"detail": detail}, status_code=status, headers=headers)(
            scope, receive, send
        )


def guard_hosts(app: Any, bind: str, allowed: Iterable[str] = ()) -> None:
    """Add :class:`HostGuardMiddleware` to a Starlette ``app`` served on ``bind``."""
    app.add_middleware(HostGuardMiddleware, policy=HostPolicy.for_bind(bind, allowed))
