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

:class:`CrashLog` answers an exception no route handled with a 500 that says only that the
service failed and the error's id, and logs that id with the method, the path and the traceback
at ERROR; what a client sent (the path, an exception's message echoing it) is escaped there as in
a refusal's line, the traceback indented under it. A route that knows what failed raises
:class:`Failure` from the error: the 500 says that instead ("the dice reader failed on this
photo").

Example:
    >>> config = log_config("info")
    >>> config["loggers"]["dicecam"]["level"]
    'INFO'
"""

from __future__ import annotations

import copy
import json
import logging
import traceback
import uuid
from typing import Any

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.http_errors import ECHO_CHARS, LONG_ECHO, clip_echoes
from service.security_headers import HEADERS

__all__ = [
    "CrashLog",
    "Failure",
    "RefusalLog",
    "crash_answer",
    "log_config",
    "log_crash",
    "say_why",
]

log = logging.getLogger("dicecam.requests")
crashes = logging.getLogger("dicecam.service")

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
    # the multipart parser warns of each body it refuses, in the client's own bytes, through
    # Python's last-resort handler (bare lines past the log's format): the refusal line says it
    config["loggers"]["python_multipart"] = {"handlers": [], "level": "ERROR", "propagate": False}
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
    log.warning("refused %s %s (%d)%s", scope["method"], _path(scope), status, why)


def _path(scope: Scope) -> str:
    """The request's path as a log line shows it: printable, and clipped when long (over
    ``LONG_ECHO`` characters, to its first ``ECHO_CHARS`` and its length, as
    :func:`~service.http_errors.clip_echoes` quotes a long input: a 5,000-character id in the
    URL made a 5 kB line)."""
    path = scope.get("path", "")
    if len(path) <= LONG_ECHO:
        return _printable(path)
    return f"{_printable(path[:ECHO_CHARS])}... ({len(path)} characters)"


def _printable(text: str) -> str:
    """``text`` with its control characters escaped (``\\n``, ``\\x1b``): a path or a detail
    that echoes what a client sent cannot start a forged line of its own in the log; each long
    input it quotes clipped as an answer's (:func:`~service.http_errors.clip_echoes`)."""
    return clip_echoes("".join(c if c.isprintable() else repr(c)[1:-1] for c in text))


def log_crash(scope: Scope, exc: BaseException) -> str:
    """Log ``exc``, raised and not handled while answering ``scope``, at ERROR: a line with a
    new error id, the method and the path, then the traceback, indented. Returns the id."""
    error_id = uuid.uuid4().hex[:12]
    cause = exc.__cause__ if isinstance(exc, Failure) and exc.__cause__ else exc
    crashes.error(
        "unhandled error %s on %s %s (500): %s\n%s",
        error_id,
        scope.get("method", "-"),
        _path(scope),
        type(cause).__name__,
        "\n".join("    " + line for line in _traceback(exc)),
    )
    return error_id


def _traceback(exc: BaseException) -> list[str]:
    """``exc``'s traceback as lines: a frame's lines as Python gives them (the code's own), each
    message on one line with its control characters escaped (it may echo what a client sent)."""
    lines: list[str] = []
    for chunk in traceback.format_exception(exc):
        if chunk.lstrip(" ").startswith('File "'):
            lines += chunk.rstrip("\n").split("\n")
        elif chunk.strip("\n"):
            lines.append(_printable(chunk.strip("\n")))
    return lines


class Failure(Exception):
    """Raised ``from`` an unexpected error, in words a client may read, saying what failed
    (``Failure("the dice reader failed on this photo")``): :class:`CrashLog` answers them with
    the error id and logs the error's traceback and this one's."""


def crash_answer(error_id: str, what: str | None = None) -> tuple[int, bytes]:
    """The 500's status and JSON body for the error ``error_id``: what failed (``what``, else
    the service) and the id, no internals."""
    detail = (
        f"{what or 'the service failed unexpectedly'}: error {error_id}, told in the server's log"
    )
    return 500, json.dumps({"detail": detail, "error_id": error_id}).encode()


def _said(exc: BaseException) -> str | None:
    """What a :class:`Failure` says failed; None for any other error."""
    return str(exc) if isinstance(exc, Failure) else None


class CrashLog:
    """ASGI middleware: an exception the app did not handle is logged (:func:`log_crash`) and
    answered :func:`crash_answer`, or the answer already begun is left cut short; it is not
    raised on, so the server does not log it again, unescaped. Add it last (the outermost
    layer), to answer the crash of any other layer too: its 500 carries the security headers
    itself (:data:`service.security_headers.HEADERS`; the layer adding them may be what
    crashed)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watch(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watch)
        except Exception as exc:
            error_id = log_crash(scope, exc)
            if started:
                return
            status, body = crash_answer(error_id, _said(exc))
            headers = [
                (b"content-type", b"application/json"),
                (b"content-length", b"%d" % len(body)),
                *HEADERS,
            ]
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": body})
