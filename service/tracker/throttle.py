"""Password guessing is slowed per player: after :data:`MAX_FAILURES` wrong passwords for one
name within :data:`WINDOW`, that name's logins (API and add-roll form) are refused with 429 and a
``Retry-After`` until the window has passed. A right password clears the count.

The counts live in the process (one per app), so a restart forgets them; each name's list holds
at most :data:`MAX_FAILURES` times, and a name whose failures are all older than the window is
forgotten (a server up for months kept every name ever mistyped or guessed).

Example (not run: needs a database session of the tracker):
    >>> guard = LoginGuard()
    >>> player = guard.check_password(session, "heather", "correct horse", now)  # doctest: +SKIP
"""

from __future__ import annotations

import math
import threading
from collections import deque
from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from service.tracker import store
from service.tracker.models import Player

__all__ = ["MAX_FAILURES", "WINDOW", "LoginGuard", "TooManyTries"]

MAX_FAILURES = 5
"""Wrong passwords for one name before its logins wait."""

WINDOW = timedelta(minutes=15)
"""How long a wrong password counts."""


class TooManyTries(store.TrackerError):
    """Too many wrong passwords for a name lately (429); ``retry_after`` in seconds."""

    status = 429

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class LoginGuard:
    """Checks passwords as :func:`service.tracker.store.check_password` does, counting the wrong
    ones per name (case and spaces around it as the name's key)."""

    def __init__(self, max_failures: int = MAX_FAILURES, window: timedelta = WINDOW) -> None:
        self.max_failures, self.window = max_failures, window
        self._failures: dict[str, deque[datetime]] = {}
        self._lock = threading.Lock()
        self._sweep_at = 64
        """The count of names at which the next failure first forgets the expired ones."""

    def __len__(self) -> int:
        """How many names have wrong passwords counted."""
        with self._lock:
            return len(self._failures)

    def _forget_expired(self, now: datetime) -> None:
        """Drop the names whose last failure is outside the window (under the lock), once the
        names have doubled since the last sweep: memory follows the names tried lately."""
        if len(self._failures) < self._sweep_at:
            return
        for key in [k for k, t in self._failures.items() if not t or now - t[-1] >= self.window]:
            del self._failures[key]
        self._sweep_at = max(64, 2 * len(self._failures))

    def check_password(self, session: Session, name: str, password: str, now: datetime) -> Player:
        key = name.strip().lower()
        with self._lock:
            times = self._failures.get(key)
            while times and now - times[0] >= self.window:
                times.popleft()
            if times is not None and len(times) >= self.max_failures:
                wait = math.ceil((times[0] + self.window - now).total_seconds())
                raise TooManyTries(
                    f"too many wrong passwords for {name.strip()!r}: try again in "
                    f"{max(wait, 1)} s (at most {self.max_failures} every "
                    f"{int(self.window.total_seconds() // 60)} minutes)",
                    max(wait, 1),
                )
        try:
            player = store.check_password(session, name, password)
        except store.Unauthorized:
            with self._lock:
                self._forget_expired(now)
                times = self._failures.setdefault(key, deque(maxlen=self.max_failures))
                times.append(now)
            raise
        with self._lock:
            self._failures.pop(key, None)
        return player
