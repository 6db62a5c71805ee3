"""The server's log: dicecam's own lines beside uvicorn's, and a line for each refused request.

``dicecam serve`` and ``dicecam tracker`` log through uvicorn's handlers (:func:`log_config`), so
the ``dicecam.*`` loggers' lines come out as uvicorn's do, at the same level; before, they had
no handler (their warnings came bare through Python's last resort, their info lines not at all).

:class:`RefusalLog` logs each request answered 4xx or 503 at WARNING, with the answer's
``detail`` (why): the access log said only the status, and ``dicecam tracker`` (at warning) not
even that. The line holds the method, the path without its query, the status and the detail;
never a header, a cookie, a body or a query string (passwords and tokens travel there). A
refusal answered with a page (the tracker's forms and error pages) says why through
:func:`say_why`.

Example:
    >>> config = log_config("info")
    >>> config["loggers"]["dicecam"]["level"]
    'INFO'
"""

from __future__ import annotations

import copy
import json
import logging
from typing import Any

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["RefusalLog", "log_config", "say_why"]

log = logging.getLogger("dicecam.requests")

DETAIL_BYTES = 4096
"""The most of an error answer's body read for its detail (answers are a sentence or two)."""


WHY = "dicecam_refusal"
"""The key of the request's state under which :func:`say_why` leaves the reason."""


def say_why(request: Request, why: str) -> None:
    """Tell :class:`RefusalLog` why the request is refused, for an answer that is a page, not
    JSON with a ``detail``. ``why`` is logged: it must hold no password or token."""
    request.scope.setdefault("state", {})[WHY] = why


def log_config(level: str) -> dict[str, Any]:
    """uvicorn's logging configuration with the ``dicecam`` loggers on its default handler."""
    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config["loggers"]["dicecam"] = {"handlers": ["default"], "level": level.upper()}
    return config


class RefusalLog:
    """ASGI middleware: a WARNING line for each request answered 4xx or 503, saying why."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 0
        body = b""

        async def watch(message: Message) -> None:
            nonlocal status, body
            if message["type"] == "http.response.start":
                status = int(message["status"])
            elif message["type"] == "http.response.body" and _refused(status):
                body = (body + message.get("body", b""))[:DETAIL_BYTES]
                if not message.get("more_body", False):
                    _log(scope, status, body)
            await send(message)

        await self.app(scope, receive, watch)


def _refused(status: int) -> bool:
    """4xx, and 503 (busy, or the tracker down); a 500 is logged with its traceback already."""
    return 400 <= status < 500 or status == 503


def _log(scope: Scope, status: int, body: bytes) -> None:
    try:
        detail = json.loads(body).get("detail")
    except (ValueError, AttributeError):  # a page (the tracker's forms), or a cut body
        detail = scope.get("state", {}).get(WHY)  # what the page's route said (say_why)
    why = f": {_printable(detail)}" if isinstance(detail, str) else ""
    log.warning("refused %s %s (%d)%s", scope["method"], _printable(scope["path"]), status, why)


def _printable(text: str) -> str:
    """``text`` with its control characters escaped (``\\n``, ``\\x1b``): a path or a detail
    that echoes what a client sent cannot start a forged line of its own in the log."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
