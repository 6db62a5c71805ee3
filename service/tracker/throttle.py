"""Password guessing and sign-up floods are slowed, each count in a sliding window kept in the
process (one per app: a restart forgets them).

Per player name and client address (:class:`LoginGuard`): after :data:`MAX_FAILURES` wrong
passwords for one name from one address within :data:`WINDOW`, that name's logins (API and
forms) from that address are refused with 429 and a ``Retry-After`` until the oldest of them
leaves the window; from another address the name logs in as before. Per name from all
addresses together: after :data:`MAX_NAME_FAILURES` wrong passwords for it within
:data:`WINDOW`, its logins from every address wait the same way (guessing spread over many
addresses is slowed, yet a few requests from one address no longer lock a player out), but for
the addresses the name logged in from within :data:`KNOWN_FOR`. A right password clears the
count of its name and address, and takes that address's wrong passwords out of the name's
count. The counts forget what has left the window (a server up for months kept every name ever
mistyped) and keep at most :data:`MAX_NAMES` names (and as many pairs, counted or known).

Per client address (:class:`AddressLimit`): wrong passwords across all names
(``DICECAM_TRACKER_LOGIN_FAILURES_PER_ADDRESS``, 20 per :data:`WINDOW`), and players
registered (``DICECAM_TRACKER_REGISTRATIONS_PER_ADDRESS``, 10 per :data:`REGISTRATION_WINDOW`);
0 turns either off. The address is the one :func:`~service.tracker.addresses.client_address`
gives (an IPv6 one's /64; a mounting service's client through the relay headers, with the
tracker's relay key).

Decisions:

- A name is throttled per (name, address) pair, not per name alone (as OWASP's credential
  stuffing advice has it): 5 wrong passwords for a name from anywhere used to make its right
  password wait from everywhere, so 5 requests every 15 minutes locked any player out for good.
  The name-wide cap of 50 is ten times the pair's: reaching it takes wrong passwords from ten
  addresses (IPv6 /64 blocks) or more within the window. An address the name logged in from
  with its right password within :data:`KNOWN_FOR` is not held by that cap (nor counted in it),
  only by its pair's and its address's limits: someone with many addresses (a /56 holds 256
  /64s) can hold a player's new addresses, not the home or phone they play from. A restart
  forgets the addresses known, as it forgets the counts.
- A held address, pair or name waits for every login, a right password too, and without the
  password being checked: were a right one let through, the answers would still tell right
  guesses from wrong. A login refused so is not counted as a wrong password.
- A right password forgets that address's wrong passwords for the same name (the player's own
  typos), in the pair's, the name's and the address's counts, not those from other addresses or
  for other names: an attacker with an account of their own cannot wipe the count of their
  guesses by logging in to it between them, nor a player the guesses against them elsewhere.
- A registration counts when the player is created; one refused (a name taken, a bad field)
  gives its place back. Each login or registration takes its place (address, pair, name)
  before the password is hashed or checked, so that requests sent at once cannot overrun a
  limit; a login that fails otherwise than by a wrong password gives its places back.
- At most :data:`MAX_ADDRESSES` addresses and :data:`MAX_NAMES` names and pairs are kept: the
  expired ones are forgotten first, then the one least recently counted (a flood from more
  addresses than that frees the oldest; a flood of that many names in 15 minutes is more
  password checks than the tracker makes in that time); of the pairs known, the one least
  recently logged in from.

Example (not run: needs a database session of the tracker):
    >>> guard = LoginGuard(per_address=AddressLimit(20, WINDOW, "wrong passwords", "..."))
    >>> player = guard.check_password(session, "heather", "hunter2!", now, "192.0.2.7")  # doctest: +SKIP
"""

from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from service.tracker import store
from service.tracker.addresses import (
    RELAY_ADDRESS_HEADER,
    RELAY_KEY_HEADER,
    client_address,
    new_relay_key,
    relay_headers,
)
from service.tracker.models import Player

__all__ = [
    "MAX_ADDRESSES",
    "MAX_FAILURES",
    "KNOWN_FOR",
    "MAX_NAMES",
    "MAX_NAME_FAILURES",
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
"""Wrong passwords for one name from one address before its logins from there wait."""

MAX_NAME_FAILURES = 50
"""Wrong passwords for one name from all addresses together before its logins wait."""

WINDOW = timedelta(minutes=15)
"""How long a wrong password counts (for its name, its pair and its address)."""

REGISTRATION_WINDOW = timedelta(hours=1)
"""How long a registration counts for its address."""

MAX_ADDRESSES = 10_000
"""The most addresses an :class:`AddressLimit` keeps counts for."""

KNOWN_FOR = timedelta(days=30)
"""How long a right password keeps its address known for its name (the name-wide cap waived)."""

MAX_NAMES = 100_000
"""The most names (and, apart, name-address pairs counted or known) a :class:`LoginGuard` keeps."""


class TooManyTries(store.TrackerError):
    """Too many wrong passwords or registrations lately (429); ``retry_after`` in seconds."""

    status = 429

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class _Held(Exception):
    """A key has its limit of events in the window: ``wait`` until the oldest leaves it."""

    def __init__(self, wait: timedelta) -> None:
        super().__init__(wait)
        self.seconds = max(math.ceil(wait.total_seconds()), 1)


def _span(window: timedelta) -> str:
    """``15 minutes``, ``hour``, ``2 hours``: a window as the messages say it."""
    minutes = int(window.total_seconds() // 60)
    if minutes % 60:
        return f"{minutes} minutes"
    return "hour" if minutes == 60 else f"{minutes // 60} hours"


class _Window:
    """At most ``limit`` (1 or more) events per key within ``window``, a sliding one, each
    event tagged; at most ``max_keys`` keys kept."""

    def __init__(self, limit: int, window: timedelta, max_keys: int) -> None:
        self.limit, self.window, self.max_keys = limit, window, max_keys
        self._events: dict[Hashable, deque[tuple[datetime, object]]] = {}
        """Each key's events (time, tag), least recently counted key first."""
        self._lock = threading.Lock()
        self._sweep_at = 64

    def __len__(self) -> int:
        """How many keys have events counted."""
        with self._lock:
            return len(self._events)

    def take(self, key: Hashable, now: datetime, tag: object = None) -> object:
        """Count an event of ``key`` at ``now``: the place it takes (for :meth:`give_back`).
        ``tag`` marks it for :meth:`forget`.

        Raises:
            _Held: ``key`` has ``limit`` events in the window already.
        """
        with self._lock:
            events = self._events.pop(key, None)  # put back last: the most recent
            while events and now - events[0][0] >= self.window:
                events.popleft()
            if events and len(events) >= self.limit:
                self._events[key] = events
                raise _Held(events[0][0] + self.window - now)
            if events is None:
                self._make_room(now)
                events = deque(maxlen=self.limit)
            place = (now, tag if tag is not None else object())
            events.append(place)
            self._events[key] = events
            return place

    def give_back(self, key: Hashable, place: object | None) -> None:
        """Uncount the event :meth:`take` answered ``place`` (it did not happen after all)."""
        with self._lock:
            events = self._events.get(key)
            if place is None or not events:
                return
            for i, event in enumerate(events):
                if event is place:
                    del events[i]
                    break
            if not events:
                del self._events[key]

    def forget(self, key: Hashable, tag: object) -> None:
        """Uncount every event of ``key`` marked ``tag``."""
        with self._lock:
            events = self._events.get(key)
            if not events:
                return
            kept = [e for e in events if e[1] != tag]
            if kept:
                events.clear()
                events.extend(kept)
            else:
                del self._events[key]

    def clear(self, key: Hashable) -> None:
        """Uncount every event of ``key``."""
        with self._lock:
            self._events.pop(key, None)

    def _make_room(self, now: datetime) -> None:
        """Before a new key is counted (under the lock): forget the keys whose last event left
        the window once they have doubled since the last sweep (or fill the room), then the
        least recently counted while :attr:`max_keys` are kept."""
        if len(self._events) >= min(self._sweep_at, self.max_keys):
            for key in [k for k, e in self._events.items() if now - e[-1][0] >= self.window]:
                del self._events[key]
            self._sweep_at = max(64, 2 * len(self._events))
        while len(self._events) >= self.max_keys:
            del self._events[next(iter(self._events))]


class AddressLimit(_Window):
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
        super().__init__(limit, window, max_addresses)
        self.what, self.setting = what, setting

    @property
    def max_addresses(self) -> int:
        """The most addresses kept."""
        return self.max_keys

    def take(self, address: str, now: datetime, tag: object = None) -> object | None:
        """Count an event of ``address`` at ``now``: the place it takes (for :meth:`give_back`),
        or None without a limit. ``tag`` marks it for :meth:`forget`.

        Raises:
            TooManyTries: ``address`` has ``limit`` events in the window already.
        """
        if not self.limit:
            return None
        try:
            return super().take(address, now, tag)
        except _Held as held:
            raise TooManyTries(
                f"too many {self.what} from your address ({address}): try again in "
                f"{held.seconds} s (at most {self.limit} every {_span(self.window)} from one "
                f"address, {self.setting})",
                held.seconds,
            ) from None

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


class LoginGuard:
    """Checks passwords as :func:`service.tracker.store.check_password` does, counting the wrong
    ones per name (case and spaces around it as the name's key) and client address together, per
    name and, with ``per_address``, per client address."""

    def __init__(
        self,
        max_failures: int = MAX_FAILURES,
        window: timedelta = WINDOW,
        *,
        max_name_failures: int = MAX_NAME_FAILURES,
        per_address: AddressLimit | None = None,
        max_names: int = MAX_NAMES,
    ) -> None:
        if not 1 <= max_failures <= max_name_failures:
            raise ValueError(
                "expected 1 <= max_failures <= max_name_failures, "
                f"got {max_failures} and {max_name_failures}"
            )
        self.max_failures, self.max_name_failures = max_failures, max_name_failures
        self.window, self.per_address = window, per_address
        self._pairs = _Window(max_failures, window, max_names)
        self._names = _Window(max_name_failures, window, max_names)
        self._known: dict[tuple[str, str], datetime] = {}
        """When each (name, address) pair last logged in, least recently first."""
        self._max_known = max_names
        self._known_lock = threading.Lock()

    def __len__(self) -> int:
        """How many names have wrong passwords counted."""
        return len(self._names)

    def check_password(
        self,
        session: Session,
        name: str,
        password: str,
        now: datetime,
        address: str | None = None,
    ) -> Player:
        """The player ``name`` and ``password`` log in, tried from ``address`` (None: counted
        per name only, all such tries as from one address).

        Raises:
            TooManyTries: the address, the name from it or the name has too many wrong
                passwords lately.
            store.Unauthorized: a wrong name or password (counted).
        """
        key, source = name.strip().lower(), address if address is not None else ""
        limit = self.per_address if address is not None else None
        pair = (key, source)
        taken: list[tuple[_Window, Hashable, object | None]] = []
        try:
            if limit is not None:
                taken.append((limit, address, limit.take(address, now, key)))
            taken.append((self._pairs, pair, self._take(self._pairs, pair, now, name, address)))
            if not self._is_known(pair, now):
                taken.append((self._names, key, self._take(self._names, key, now, name, source)))
            player = store.check_password(session, name, password)
        except store.Unauthorized:
            raise  # every count keeps its place: a wrong password
        except BaseException:
            for counts, counted, place in taken:
                counts.give_back(counted, place)
            raise
        self._pairs.clear(pair)  # the player's own typos from here, with this login's place
        self._names.forget(key, source)
        if limit is not None:
            limit.forget(address, key)
        with self._known_lock:
            self._known.pop(pair, None)
            self._known[pair] = now
            while len(self._known) > self._max_known:
                del self._known[next(iter(self._known))]
        return player

    def _is_known(self, pair: tuple[str, str], now: datetime) -> bool:
        """Whether ``pair`` logged in with the right password within :data:`KNOWN_FOR`."""
        with self._known_lock:
            since = self._known.get(pair)
            return since is not None and now - since < KNOWN_FOR

    def _take(
        self, counts: _Window, key: Hashable, now: datetime, name: str, tag: str | None
    ) -> object:
        """A place in ``counts`` (the pairs', ``tag`` the address or None; or the names',
        ``tag`` the source), or :class:`TooManyTries` naming ``name``'s limit and wait."""
        try:
            return counts.take(key, now, tag)
        except _Held as held:
            span = _span(self.window)
            if counts is self._names:
                where = "from many addresses"
                rule = f"{self.max_name_failures} every {span} for one name from all addresses"
            else:
                where = f"from your address ({tag})" if tag is not None else "lately"
                rule = f"{self.max_failures} every {span} for one name from one address"
            raise TooManyTries(
                f"too many wrong passwords for {name.strip()!r} {where}: try again in "
                f"{held.seconds} s (at most {rule})",
                held.seconds,
            ) from None
