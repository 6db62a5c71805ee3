"""One size limit on request bodies for the service and the tracker: 413 before the app reads
more than ``max_bytes``, whether the client says the length (``Content-Length``) or streams the
body in chunks.

Example:
    >>> from fastapi import FastAPI
    >>> app = FastAPI()
    >>> app.add_middleware(BodyLimitMiddleware, max_bytes=1_000_000, detail="too large")
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["BodyLimitMiddleware"]


class BodyLimitMiddleware:
    """Answer 413 (JSON ``{"detail": detail}``) to a request under ``prefix`` whose body is
    larger than ``max_bytes``: checks ``Content-Length`` first, then counts the bytes of a
    streamed (chunked) body as the app reads it. Past the limit the app is told the client left
    (``http.disconnect``) and whatever it answers then is dropped: the 413 went first."""

    def __init__(self, app: ASGIApp, max_bytes: int, detail: str, prefix: str = "/") -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.detail = detail
        self.prefix = prefix

    async def _reject(self, send: Send) -> None:
        body = json.dumps({"detail": self.detail}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] in ("GET", "HEAD", "OPTIONS")
            or not scope["path"].startswith(self.prefix)
        ):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.max_bytes:
            await self._reject(send)
            return
        seen = 0
        started = rejected = False

        async def counting_receive() -> Message:
            nonlocal seen, started, rejected
            if rejected:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    if not started:
                        await self._reject(send)
                    started = rejected = True
                    return {"type": "http.disconnect"}
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if rejected:
                return
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        await self.app(scope, counting_receive, tracking_send)
