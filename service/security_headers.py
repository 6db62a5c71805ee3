"""Security headers on every answer of the service and the tracker: no MIME sniffing, no framing
by another site (clickjacking of the forms and the camera page), no referrer sent elsewhere, and
a Content-Security-Policy. A response that sets a header itself keeps its own (the tracker's
pages send a stricter policy naming their one inline script by hash).

Example:
    >>> from fastapi import FastAPI
    >>> app = FastAPI()
    >>> app.add_middleware(SecurityHeadersMiddleware)
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["DEFAULT_CSP", "SecurityHeadersMiddleware"]

DEFAULT_CSP = (
    "default-src 'self'; img-src 'self' blob: data:; media-src 'self' blob:; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
"""The camera page's policy: its scripts, styles and fetches are its own; photos are shown from
``blob:`` and ``data:`` addresses."""

HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"content-security-policy", DEFAULT_CSP.encode()),
)


class SecurityHeadersMiddleware:
    """Adds :data:`HEADERS` to each HTTP response that does not carry them already."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or [])
                present = {name.lower() for name, _ in headers}
                headers += [(k, v) for k, v in HEADERS if k not in present]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)
