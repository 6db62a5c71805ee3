"""Client of a dicecam Morning Roll tracker, with an on-disk outbox so no turn is ever lost.

Example (not run: needs a running tracker):
    >>> from service.tracker_client import TrackerClient, TurnSubmission
    >>> client = TrackerClient("http://127.0.0.1:8000/tracker", outbox_dir="outbox")  # doctest: +SKIP
    >>> client.login("heather", "correct horse")  # doctest: +SKIP
    >>> client.submit_turn(TurnSubmission(player="heather", score=600))  # doctest: +SKIP
"""

from service.tracker_client.client import (
    DeliveryReport,
    RollEvidence,
    TrackerClient,
    TurnSubmission,
)
from service.tracker_client.errors import (
    TrackerAuthError,
    TrackerError,
    TrackerNotFound,
    TrackerRejected,
    TrackerThrottled,
    TrackerUnavailable,
)
from service.tracker_client.outbox import Outbox, OutboxEntry

__all__ = [
    "DeliveryReport",
    "Outbox",
    "OutboxEntry",
    "RollEvidence",
    "TrackerAuthError",
    "TrackerClient",
    "TrackerError",
    "TrackerNotFound",
    "TrackerRejected",
    "TrackerThrottled",
    "TrackerUnavailable",
    "TurnSubmission",
]
