"""Hand a finished Morning Roll turn to the tracker through :mod:`service.tracker_client`."""

from __future__ import annotations

import io
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from service.turns import TurnSession

__all__ = ["EVIDENCE_ROLLS", "Every", "TrackerSubmitter", "as_jpeg", "embedded_tracker_url"]

log = logging.getLogger("dicecam.service")

EVIDENCE_ROLLS = 60
"""Rolls of a turn whose evidence a tracker keeps (its ``MAX_ROLLS``): a longer turn of hot dice
is sent with its whole score and the evidence of its first rolls."""


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


def embedded_tracker_url(scheme: str, host: str | None, port: int) -> str:
    """The embedded tracker of a server listening on ``host``:``port`` (loopback when it
    listens everywhere)."""
    if host in ("0.0.0.0", "::", "", None):
        host = "127.0.0.1"
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}:{port}/tracker"


def _moved_here(url: str, listen: tuple[str, int]) -> str | None:
    """``url`` as the embedded tracker of a server listening at ``listen`` now, when it names
    that tracker at another loopback address on the same port; else None (another tracker)."""
    try:
        old = httpx.URL(url)
    except (httpx.InvalidURL, TypeError):
        return None
    host, port = listen
    old_port = old.port or {"http": 80, "https": 443}.get(old.scheme)
    if old.path.rstrip("/") != "/tracker" or old_port != port:
        return None
    if old.host not in ("127.0.0.1", "localhost", "::1", host):
        return None
    here = embedded_tracker_url(old.scheme, host, port)
    return None if here == url else here


class TrackerSubmitter:
    """Submits with the player's tracker token (given when the turn started) to the session's
    tracker URL. The turn id is the idempotency key, so a turn is stored at most once.

    Receipts: ``submitted`` (with the tracker's turn), ``queued`` (tracker unreachable, or the
    player's token refused: expired or revoked, marked ``login``; kept in the on-disk outbox),
    ``rejected`` (the tracker's reason, e.g. outside 8am-8pm), or ``not-submitted`` (no token:
    the player did not log in).
    """

    def __init__(
        self,
        outbox_dir: Path,
        *,
        retries: int = 1,
        embedded: bool = False,
        listen: tuple[str, int] | None = None,
        retry_s: float = 30.0,
    ) -> None:
        self.outbox_dir = Path(outbox_dir)
        self.retries = retries
        self.retry_s = retry_s
        """How often the service tries the queued turns again (``DICECAM_OUTBOX_RETRY_S``; 0:
        never), as its receipts say."""
        self.embedded = embedded
        """The tracker is this server's own: over HTTPS its certificate is our self-signed one."""
        self.listen = listen
        """Where this server listens (host, port), with ``embedded``: a turn queued for its
        tracker at 127.0.0.1 while it listened on a LAN address (dicecam before 4ff4b09) is
        sent to the address it listens on now (else it stayed queued for good)."""

    def _here(self, session: TurnSession) -> None:
        """Point the turn at this server's embedded tracker when it names it at an address
        the server does not answer on (see :attr:`listen`)."""
        if self.embedded and self.listen and session.tracker_url:
            here = _moved_here(session.tracker_url, self.listen)
            if here is not None:
                log.info("turn %s: its tracker %s is now %s", session.id, session.tracker_url, here)
                session.tracker_url = here

    def __call__(self, session: TurnSession) -> dict[str, Any]:
        from service.tracker_client import RollEvidence, TurnSubmission

        self._here(session)
        if not session.tracker_url:
            return {"status": "not-submitted", "detail": "no tracker configured"}
        if not session.tracker_token:
            return {
                "status": "not-submitted",
                "detail": "not logged in to the tracker when the turn ended: add it by hand "
                "on the tracker's Add roll page, and log in on the page before the next turn "
                "ends",
            }
        rolls = [
            RollEvidence(values=r.values, reading=r.reading, photo=as_jpeg(r.photo))
            for r in session.rolls
        ]
        submission = TurnSubmission(
            player=session.player,
            score=session.points,
            idempotency_key=_key(session),
            rolls=rolls[:EVIDENCE_ROLLS],
        )
        if len(rolls) > EVIDENCE_ROLLS:
            log.warning(
                "turn %s of %s has %d rolls: the tracker keeps the evidence of %d, so the first "
                "%d are sent (the score counts them all)",
                session.id,
                session.player,
                len(rolls),
                EVIDENCE_ROLLS,
                EVIDENCE_ROLLS,
            )
        with self.client(session.tracker_url, token=session.tracker_token) as client:
            receipt = self._receipt(lambda: client.submit_turn(submission))
        assert receipt is not None  # submit_turn answers the stored turn or raises
        return receipt

    def retry(self, session: TurnSession, *, now: bool = False) -> dict[str, Any] | None:
        """Try again a turn this submitter queued (:meth:`__call__` answered ``queued``): its
        new receipt, or None while it waits for its next try (the outbox backs off; ``now``
        tries at once, as after a new login) or the outbox no longer holds it."""
        if not (session.tracker_url and session.tracker_token):
            return None
        if (session.submission or {}).get("login"):  # refused token: wait for a new login
            return None
        self._here(session)
        with self.client(session.tracker_url, token=session.tracker_token) as client:
            try:
                return self._receipt(lambda: client.deliver(_key(session), force=now))
            except KeyError:
                return None

    def refuse_late(self, held: list[TurnSession]) -> dict[str, str]:
        """Refuse the outbox's pending turns too old to count that none of the ``held`` turns
        still sends (their tracker was down past their day and the service let go of the turn
        and its token): moved to ``rejected/`` with the reason, photos kept
        (:func:`service.tracker_client.late.refuse_late`). Returns the reasons by key."""
        from datetime import UTC, datetime

        from service.tracker_client.late import refuse_late
        from service.tracker_client.outbox import Outbox

        if not (self.outbox_dir / "pending").is_dir():
            return {}
        refused = refuse_late(Outbox(self.outbox_dir), datetime.now(UTC), {_key(s) for s in held})
        for key, why in refused.items():
            log.warning("outbox: turn %s refused: %s", key, why)
        return refused

    def client(self, url: str, *, token: str | None = None) -> Any:
        """A :class:`service.tracker_client.TrackerClient` for ``url`` with this submitter's
        outbox, trusting the embedded tracker's self-signed certificate."""
        from service.tracker_client import TrackerClient

        transport = None
        if url.startswith("https://") and (self.embedded or url.startswith("https://127.0.0.1")):
            transport = httpx.HTTPTransport(verify=False)  # our own self-signed certificate
        return TrackerClient(
            url,
            token=token,
            outbox_dir=self.outbox_dir,
            retries=self.retries,
            backoff=0.2,
            transport=transport,
        )

    def _receipt(self, send: Callable[[], dict[str, Any] | None]) -> dict[str, Any] | None:
        from service.tracker_client import TrackerAuthError, TrackerRejected, TrackerUnavailable

        try:
            stored = send()
        except TrackerUnavailable as exc:
            again = (
                f"the service tries again on its own every {self.retry_s:g} s"
                if self.retry_s > 0
                else "the service does not try again on its own (DICECAM_OUTBOX_RETRY_S=0)"
            )
            return {
                "status": "queued",
                "detail": f"{exc}; kept in the outbox ({self.outbox_dir}): {again}, "
                "`dicecam outbox deliver` sends it at once",
            }
        except TrackerAuthError as exc:  # an expired or revoked token: the turn is not lost
            return {
                "status": "queued",
                "login": True,
                "detail": f"the tracker refused the player's token ({exc.detail}); the turn is "
                f"kept in the outbox ({self.outbox_dir}) and sent once the player logs in to "
                "the tracker again on the camera page",
            }
        except TrackerRejected as exc:
            return {"status": "rejected", "detail": exc.detail}
        return None if stored is None else {"status": "submitted", "turn": stored}


def _key(session: TurnSession) -> str:
    """The turn's idempotency key: a turn is stored once however often it is sent."""
    return f"dicecam-{session.id}"


class Every:
    """Calls ``task`` every ``seconds`` in a daemon thread, from :meth:`start` to :meth:`stop`
    (the service's retries of queued turns). An error is logged and the next call comes.

    Example:
        >>> ticks = []
        >>> loop = Every(0.01, lambda: ticks.append(1)); loop.start(); loop.stop()
    """

    def __init__(
        self,
        seconds: float,
        task: Callable[[], object],
        *,
        name: str = "dicecam-every",
        first: bool = False,
    ):
        self.seconds, self.task, self.name = seconds, task, name
        self.first = first
        """Call ``task`` once at :meth:`start` too (in the thread), not only after a wait."""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None

    def _run(self) -> None:
        if self.first:
            self._call()
        while not self._stop.wait(self.seconds):
            self._call()

    def _call(self) -> None:
        try:
            self.task()
        except Exception:
            log.exception("%s: the periodic task failed", self.name)
