"""Password guessing and sign-up floods are slowed, each count in a sliding window kept in the
process (one per app: a restart forgets them).

Per player name (:class:`LoginGuard`): after :data:`MAX_FAILURES` wrong passwords for one name
within :data:`WINDOW`, that name's logins (API and forms) are refused with 429 and a
``Retry-After`` until the oldest of them leaves the window. A right password clears the name's
count. Each name's list holds at most :data:`MAX_FAILURES` times, and a name whose failures are
all older than the window is forgotten (a server up for months kept every name ever mistyped).

Per client address (:class:`AddressLimit`): wrong passwords across all names
(``DICECAM_TRACKER_LOGIN_FAILURES_PER_ADDRESS``, 20 per :data:`WINDOW`), and players
registered (``DICECAM_TRACKER_REGISTRATIONS_PER_ADDRESS``, 10 per :data:`REGISTRATION_WINDOW`);
0 turns either off. The address is ``request.client.host`` as uvicorn gives it (it takes
``X-Forwarded-For`` only from the addresses in its ``FORWARDED_ALLOW_IPS``, by default a reverse
proxy on this machine); an IPv6 address counts with its /64 (one home's or server's block).
A service mounting the tracker (``dicecam serve``) logs the camera page's players in through
the tracker's API from its own address: it relays its client's address in
:data:`RELAY_ADDRESS_HEADER`, counted only beside :data:`RELAY_KEY_HEADER` carrying the key the
tracker made at start (``app.state.relay_key``, random, never logged; compared in constant time).
Decisions:

- A held address waits for every login, a right password too, and without the password being
  checked: were a right one let through, the answers would still tell right guesses from wrong.
- A right password forgets that address's wrong passwords for the same name (the player's own
  typos), not those for other names: an attacker with an account of their own cannot wipe the
  count of their guesses by logging in to it between them.
- A registration counts when the player is created; one refused (a name taken, a bad field)
  gives its place back. Each login or registration takes its place before the password is
  hashed or checked, so that requests sent at once cannot overrun the limit.
- At most :data:`MAX_ADDRESSES` addresses are kept: the expired ones are forgotten first, then
  the one least recently counted (a flood from more addresses than that frees the oldest).

Example (not run: needs a database session of the tracker):
    >>> guard = LoginGuard(per_address=AddressLimit(20, WINDOW, "wrong passwords", "..."))
    >>> player = guard.check_password(session, "heather", "hunter2!", now, "192.0.2.7")  # doctest: +SKIP
"""

from __future__ import annotations

import hmac
import ipaddress
import math
import secrets
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from sqlalchemy.orm import Session
from starlette.requests import Request

from service.tracker import store
from service.tracker.models import Player

__all__ = [
    "MAX_ADDRESSES",
    "MAX_FAILURES",
    "RELAY_ADDRESS_HEADER",
    "RELAY_KEY_HEADER",
    "REGISTRATION_WINDOW",
    "WINDOW",
    "AddressLimit",
    "LoginGuard",
    "TooManyTries",
    "client_address",
    "new_relay_key",
    "relay_headers",
]

MAX_FAILURES = 5
"""Wrong passwords for one name before its logins wait."""

WINDOW = timedelta(minutes=15)
"""How long a wrong password counts (for its name and for its address)."""

REGISTRATION_WINDOW = timedelta(hours=1)
"""How long a registration counts for its address."""

MAX_ADDRESSES = 10_000
"""The most addresses an :class:`AddressLimit` keeps counts for."""

RELAY_ADDRESS_HEADER = "X-Dicecam-Relayed-Client"
"""The address of the client a service mounting the tracker logs in for."""

RELAY_KEY_HEADER = "X-Dicecam-Relay-Key"
"""The tracker's relay key, without which :data:`RELAY_ADDRESS_HEADER` is not heeded."""


class TooManyTries(store.TrackerError):
    """Too many wrong passwords or registrations lately (429); ``retry_after`` in seconds."""

    status = 429

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def new_relay_key() -> str:
    """A tracker's relay key: 256 random bits, made at its start."""
    return secrets.token_urlsafe(32)


def relay_headers(key: str, host: str | None) -> dict[str, str]:
    """The headers with which a service's request to its mounted tracker (whose relay key is
    ``key``) counts under the address ``host`` of the service's own client; none without one."""
    return {RELAY_ADDRESS_HEADER: host, RELAY_KEY_HEADER: key} if host else {}


def _relayed_host(request: Request) -> str | None:
    """The address :data:`RELAY_ADDRESS_HEADER` names when :data:`RELAY_KEY_HEADER` carries the
    relay key of the app serving ``request``; else None."""
    app = request.scope.get("app")
    key: str | None = getattr(getattr(app, "state", None), "relay_key", None)
    given = request.headers.get(RELAY_KEY_HEADER) if key else None
    if not key or given is None:
        return None
    if not hmac.compare_digest(given.encode("latin-1"), key.encode("latin-1")):
        return None
    return request.headers.get(RELAY_ADDRESS_HEADER) or None


def client_address(request: Request) -> str:
    """The address a request counts under: its client's IP address (an IPv6 one's /64 block,
    an IPv4-mapped one as IPv4), or the client's name as given; ``unknown`` without one (a Unix
    socket). The client is the one a mounting service relays, with the relay key."""
    host = _relayed_host(request) or (request.client.host if request.client else "")
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return host or "unknown"
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def _span(window: timedelta) -> str:
    """``15 minutes``, ``hour``, ``2 hours``: a window as the messages say it."""
    minutes = int(window.total_seconds() // 60)
    if minutes % 60:
        return f"{minutes} minutes"
    return "hour" if minutes == 60 else f"{minutes // 60} hours"


class AddressLimit:
    """At most ``limit`` events (``what``: ``wrong passwords``, ``registrations``) per client
    address within ``window``, a sliding one; ``limit`` 0: none. ``setting`` names the variable
    that sets ``limit``, for the message of the :class:`TooManyTries` it raises."""

    def __init__(
        self,
        limit: int,
        window: timedelta,
        what: str,
        setting: str,
        *,
        max_addresses: int = MAX_ADDRESSES,
    ) -> None:
        if limit < 0:
            raise ValueError(f"expected a limit of 0 (none) or more for {what}, got {limit}")
        self.limit, self.window, self.what, self.setting = limit, window, what, setting
        self.max_addresses = max_addresses
        self._events: dict[str, deque[tuple[datetime, object]]] = {}
        """Each address's events (time, tag), least recently counted address first."""
        self._lock = threading.Lock()
        self._sweep_at = 64

    def __len__(self) -> int:
        """How many addresses have events counted."""
        with self._lock:
            return len(self._events)

    def take(self, address: str, now: datetime, tag: object = None) -> object | None:
        """Count an event of ``address`` at ``now``: the place it takes (for :meth:`give_back`),
        or None without a limit. ``tag`` marks it for :meth:`forget`.

        Raises:
            TooManyTries: ``address`` has ``limit`` events in the window already.
        """
        if not self.limit:
            return None
        with self._lock:
            events = self._events.pop(address, None)  # put back last: the most recent
            while events and now - events[0][0] >= self.window:
                events.popleft()
            if events and len(events) >= self.limit:
                self._events[address] = events
                raise self._refusal(address, events[0][0] + self.window - now)
            if events is None:
                self._make_room(now)
                events = deque(maxlen=self.limit)
            place = (now, tag if tag is not None else object())
            events.append(place)
            self._events[address] = events
            return place

    def give_back(self, address: str, place: object | None) -> None:
        """Uncount the event :meth:`take` answered ``place`` (it did not happen after all)."""
        with self._lock:
            events = self._events.get(address)
            if place is None or not events:
                return
            for i, event in enumerate(events):
                if event is place:
                    del events[i]
                    break
            if not events:
                del self._events[address]

    def forget(self, address: str, tag: object) -> None:
        """Uncount every event of ``address`` marked ``tag``."""
        with self._lock:
            events = self._events.get(address)
            if not events:
                return
            kept = [e for e in events if e[1] != tag]
            if kept:
                events.clear()
                events.extend(kept)
            else:
                del self._events[address]

    @contextmanager
    def holding(self, address: str, now: datetime) -> Iterator[None]:
        """Count an event of ``address`` (raising :class:`TooManyTries` when it has too many)
        that stays counted unless the block raises."""
        place = self.take(address, now)
        try:
            yield
        except BaseException:
            self.give_back(address, place)
            raise

    def _make_room(self, now: datetime) -> None:
        """Before a new address is counted (under the lock): forget the addresses whose last
        event left the window once they have doubled since the last sweep (or fill the room),
        then the least recently counted while :attr:`max_addresses` are kept."""
        if len(self._events) >= min(self._sweep_at, self.max_addresses):
            for key in [k for k, e in self._events.items() if now - e[-1][0] >= self.window]:
                del self._events[key]
            self._sweep_at = max(64, 2 * len(self._events))
        while len(self._events) >= self.max_addresses:
            del self._events[next(iter(self._events))]

    def _refusal(self, address: str, wait: timedelta) -> TooManyTries:
        seconds = max(math.ceil(wait.total_seconds()), 1)
        return TooManyTries(
            f"too many {self.what} from your address ({address}): try again in {seconds} s "
            f"(at most {self.limit} every {_span(self.window)} from one address, "
            f"{self.setting})",
            seconds,
        )


class LoginGuard:
    """Checks passwords as :func:`service.tracker.store.check_password` does, counting the wrong
    ones per name (case and spaces around it as the name's key) and, with ``per_address``, per
    client address."""

    def __init__(
        self,
        max_failures: int = MAX_FAILURES,
        window: timedelta = WINDOW,
        *,
        per_address: AddressLimit | None = None,
    ) -> None:
        self.max_failures, self.window = max_failures, window
        self.per_address = per_address
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

    def check_password(
        self,
        session: Session,
        name: str,
        password: str,
        now: datetime,
        address: str | None = None,
    ) -> Player:
        """The player ``name`` and ``password`` log in, tried from ``address`` (None: counted
        per name only).

        Raises:
            TooManyTries: the address or the name has too many wrong passwords lately.
            store.Unauthorized: a wrong name or password (counted).
        """
        key = name.strip().lower()
        limit = self.per_address if address is not None else None
        place = limit.take(address, now, key) if limit is not None else None
        try:
            self._check_name(name, key, now)
            player = store.check_password(session, name, password)
        except store.Unauthorized:
            with self._lock:
                self._forget_expired(now)
                times = self._failures.setdefault(key, deque(maxlen=self.max_failures))
                times.append(now)
            raise  # the address keeps the place: a wrong password
        except BaseException:
            if limit is not None:
                limit.give_back(address, place)
            raise
        with self._lock:
            self._failures.pop(key, None)
        if limit is not None:
            limit.forget(address, key)  # this name's own typos, with this login's place
        return player

    def _check_name(self, name: str, key: str, now: datetime) -> None:
        """Raise :class:`TooManyTries` when the name ``key`` has too many wrong passwords."""
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
