"""Hand a finished Morning Roll turn to the tracker through :mod:`service.tracker_client`."""

from __future__ import annotations

import io
import logging
from pathlib import Path
from typing import Any

from service.turns import TurnSession

__all__ = ["TrackerSubmitter", "as_jpeg"]

log = logging.getLogger("dicecam.service")


def as_jpeg(photo: bytes | None, max_bytes: int = 1_500_000) -> bytes | None:
    """The photo as JPEG evidence the tracker accepts: kept as is when it is a JPEG of at most
    ``max_bytes``, else re-encoded at most 2048 px on its long side; None when unreadable."""
    if not photo:
        return None
    if photo.startswith(b"\xff\xd8\xff") and len(photo) <= max_bytes:
        return photo
    try:
        from PIL import Image

        with Image.open(io.BytesIO(photo)) as im:
            im = im.convert("RGB")
            im.thumbnail((2048, 2048))
            buf = io.BytesIO()
            im.save(buf, "JPEG", quality=88)
        return buf.getvalue()
    except Exception:
        return None


class TrackerSubmitter:
    """Submits with the player's tracker token (given when the turn started) to the session's
    tracker URL. The turn id is the idempotency key, so a turn is stored at most once.

    Receipts: ``submitted`` (with the tracker's turn), ``queued`` (tracker unreachable: kept in
    the on-disk outbox), ``rejected`` (the tracker's reason, e.g. outside 8am-8pm), or
    ``not-submitted`` (no token: the player did not log in).
    """

    def __init__(self, outbox_dir: Path, *, retries: int = 1) -> None:
        self.outbox_dir = Path(outbox_dir)
        self.retries = retries

    def __call__(self, session: TurnSession) -> dict[str, Any]:
        from service.tracker_client import (
            RollEvidence,
            TrackerClient,
            TrackerRejected,
            TrackerUnavailable,
            TurnSubmission,
        )

        if not session.tracker_url:
            return {"status": "not-submitted", "detail": "no tracker configured"}
        if not session.tracker_token:
            return {
                "status": "not-submitted",
                "detail": "log in to the tracker on the page to submit Morning Roll turns",
            }
        transport = None
        if session.tracker_url.startswith("https://127.0.0.1"):
            import httpx

            transport = httpx.HTTPTransport(verify=False)  # our own self-signed certificate
        rolls = [
            RollEvidence(values=r.values, reading=r.reading, photo=as_jpeg(r.photo))
            for r in session.rolls
        ]
        submission = TurnSubmission(
            player=session.player,
            score=session.points,
            idempotency_key=f"dicecam-{session.id}",
            rolls=rolls[:60],
        )
        with TrackerClient(
            session.tracker_url,
            token=session.tracker_token,
            outbox_dir=self.outbox_dir,
            retries=self.retries,
            backoff=0.2,
            transport=transport,
        ) as client:
            try:
                stored = client.submit_turn(submission)
            except TrackerUnavailable as exc:
                return {
                    "status": "queued",
                    "detail": f"{exc}; kept in the outbox ({self.outbox_dir}), "
                    "`dicecam outbox deliver` sends it later",
                }
            except TrackerRejected as exc:
                return {"status": "rejected", "detail": exc.detail}
        return {"status": "submitted", "turn": stored}
