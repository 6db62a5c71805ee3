"""What can go wrong talking to a tracker."""

from __future__ import annotations

__all__ = ["TrackerAuthError", "TrackerError", "TrackerRejected", "TrackerUnavailable"]


class TrackerError(Exception):
    """Base class of the client's errors."""


class TrackerUnavailable(TrackerError):
    """The tracker could not be reached (or answered 5xx/429). Queued turns stay in the outbox."""


class TrackerRejected(TrackerError):
    """The tracker refused the request (4xx); ``detail`` is the server's message."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(f"tracker refused ({status}): {detail}")
        self.status = status
        self.detail = detail


class TrackerAuthError(TrackerRejected):
    """401: missing, unknown or wrong credentials. Queued turns stay in the outbox."""
