"""What can go wrong talking to a tracker."""

from __future__ import annotations

__all__ = [
    "TrackerAuthError",
    "TrackerError",
    "TrackerNotFound",
    "TrackerRejected",
    "TrackerThrottled",
    "TrackerUnavailable",
]


class TrackerError(Exception):
    """Base class of the client's errors."""


class TrackerUnavailable(TrackerError):
    """The tracker could not be reached (or answered 5xx/429). Queued turns stay in the outbox."""


class TrackerThrottled(TrackerUnavailable):
    """429: too many tries lately (wrong passwords, registrations); ``detail`` is the server's
    message (the limit and the wait), ``retry_after`` its ``Retry-After`` in seconds, if any."""

    def __init__(self, message: str, detail: str, retry_after: int | None) -> None:
        super().__init__(message)
        self.detail = detail
        self.retry_after = retry_after


class TrackerRejected(TrackerError):
    """The tracker refused the request (4xx); ``detail`` is the server's message."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(f"tracker refused ({status}): {detail}")
        self.status = status
        self.detail = detail


class TrackerAuthError(TrackerRejected):
    """401: missing, unknown or wrong credentials. Queued turns stay in the outbox."""


class TrackerNotFound(TrackerError):
    """No tracker at the URL: it answered ``GET /api/v1/me`` as no tracker does (a 404 from
    `dicecam serve`'s own address, not its ``/tracker``). Nothing was sent; queued turns stay
    in the outbox as they were. ``status`` and ``detail`` are that answer's."""

    def __init__(self, url: str, status: int, detail: str) -> None:
        super().__init__(f"expected a tracker at {url}, got {status} to GET /api/v1/me: {detail}")
        self.url = url
        self.status = status
        self.detail = detail
