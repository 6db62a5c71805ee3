"""Fixtures for the service tests: a settable clock, a real uvicorn server on a port held from
its choice on, a throwaway PostgreSQL server started from Debian's binaries (skips with a
reason when absent) and a shared chromium; the classes behind them live in
``dicecam_testing`` (:mod:`.servers`, :mod:`.postgres`, :mod:`.page`)."""

from __future__ import annotations

import logging
import subprocess
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from dicecam_testing.page import SharedChromium
from dicecam_testing.postgres import ThrowawayPostgres
from dicecam_testing.servers import LiveServer, bound_socket

__all__ = ["LiveServer", "SettableClock", "ThrowawayPostgres", "bound_socket"]


class SettableClock:
    """The tracker's clock in tests: ``clock.set("2026-03-10T14:00:00+00:00")``."""

    def __init__(self, now: datetime | str = "2026-06-15T12:00:00+00:00") -> None:
        self.set(now)

    def set(self, now: datetime | str) -> None:
        self.now = datetime.fromisoformat(now) if isinstance(now, str) else now
        if self.now.tzinfo is None:
            raise ValueError("SettableClock needs an aware datetime")

    def __call__(self) -> datetime:
        return self.now.astimezone(UTC)


@pytest.fixture
def unused_port() -> Iterator[int]:
    """A TCP port nothing listens on (yet): a connection to it is refused until the test serves
    on it (``serve(app, port=unused_port)``). It stays bound for the test, so no other test
    process takes it meanwhile."""
    with bound_socket() as sock:
        yield sock.getsockname()[1]


@pytest.fixture
def errors() -> Iterator[list[logging.LogRecord]]:
    """ERROR records of dicecam's service log and of uvicorn's, as logged. Taken by a filter,
    not a handler: a server's start (uvicorn's logging.config.dictConfig) removes the handlers
    of uvicorn's loggers and keeps their filters."""
    records: list[logging.LogRecord] = []

    def keep(record: logging.LogRecord) -> bool:
        if record.levelno >= logging.ERROR:
            records.append(record)
        return True

    loggers = [logging.getLogger(name) for name in ("dicecam.service", "uvicorn.error")]
    for logger in loggers:
        logger.addFilter(keep)
    yield records
    for logger in loggers:
        logger.removeFilter(keep)


@pytest.fixture
def clock() -> SettableClock:
    return SettableClock()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'tracker.sqlite3'}"


# -- PostgreSQL -------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def postgres() -> Iterator[ThrowawayPostgres]:
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed (pip install 'dicecam[postgres]')")
    try:
        server = ThrowawayPostgres().start()
    except (FileNotFoundError, RuntimeError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"no throwaway PostgreSQL server: {exc}")
    yield server
    server.stop()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request, tmp_path: Path) -> str:
    """A fresh empty database: a SQLite file, then a new database on the throwaway PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'tracker.sqlite3'}"
    return request.getfixturevalue("postgres").create_database()


@pytest.fixture
def serve():
    """``server = serve(app)``: a real uvicorn server on a free port, stopped after the test."""
    started: list[LiveServer] = []

    def start(app, *, root_path: str = "", port: int | None = None) -> LiveServer:
        server = LiveServer(app, root_path=root_path, port=port).__enter__()
        started.append(server)
        return server

    yield start
    for server in reversed(started):
        server.__exit__(None, None, None)


QUICK_ARGON2 = {"time_cost": 1, "memory_cost": 1024, "parallelism": 1}
"""argon2id's parameters for the tracker in the test process: ``quick_password_hashing``."""


@pytest.fixture(scope="session", autouse=True)
def quick_password_hashing() -> Iterator[object]:
    """The tracker served in this process hashes and checks passwords with argon2id at
    :data:`QUICK_ARGON2` (1 MiB, one pass) instead of 64 MiB and three: the same code and hash
    format at a hundredth of the cost (a player's join, a hash and a check, took 0.3-1.6 s
    here). Yields the real hasher, whose parameters ``test_tracker_password_cost`` checks; a
    ``dicecam`` run as a subprocess hashes with it."""
    from argon2 import PasswordHasher

    from service.tracker import security

    real = security._hasher
    security._hasher = PasswordHasher(**QUICK_ARGON2)
    yield real
    security._hasher = real


@pytest.fixture(scope="session")
def password_hash(quick_password_hashing) -> str:
    """One argon2 hash of ``PASSWORD`` computed once: seeding many players stays fast."""
    from service.tracker.security import hash_password

    return hash_password(PASSWORD)


PASSWORD = "hunter2hunter2"


@pytest.fixture
def seed_players(password_hash):
    """``seed_players(app, names, tz="UTC") -> {name: auth headers}`` straight into the database
    (the password is ``hunter2hunter2``); the HTTP registration path has its own tests."""

    def seed(app, names, tz: str = "UTC") -> dict[str, dict[str, str]]:
        from service.tracker import store
        from service.tracker.schemas import Registration

        out = {}
        with app.state.sessionmaker() as session:
            now = app.state.clock()
            for name in names:
                reg = Registration(name=name, password=PASSWORD, timezone=tz)
                player = store.register(session, reg, now, password_hash=password_hash)
                out[name] = {"Authorization": f"Bearer {store.issue_token(session, player, now)}"}
            session.commit()
        return out

    return seed


def midday_zone_name(now: datetime | None = None) -> str:
    """An IANA zone where it is about 13:00 right now (for tests that use the real clock)."""
    hour = (now or datetime.now(UTC)).hour
    offset = 13 - hour  # -10 .. 13
    return "Etc/GMT" if offset == 0 else f"Etc/GMT{-offset:+d}"


@pytest.fixture
def midday_zone() -> str:
    return midday_zone_name()


# -- the tracker over a real socket ------------------------------------------------------


@pytest.fixture
def tracker_app(database_url, clock):
    app = _create_tracker(database_url, clock=clock)
    yield app
    app.state.db.dispose()


@pytest.fixture
def tracker(tracker_app, clock, serve):
    with httpx.Client(base_url=serve(tracker_app).url, timeout=30) as http:
        yield http, clock


@pytest.fixture
def sqlite_tracker(sqlite_url, clock, serve):
    app = _create_tracker(sqlite_url, clock=clock)
    with httpx.Client(base_url=serve(app).url, timeout=30) as http:
        yield http, clock
    app.state.db.dispose()


def join_player(
    http: httpx.Client, name: str, tz: str = "UTC", password: str = "hunter2hunter2"
) -> dict:
    r = http.post("/api/v1/players", json={"name": name, "password": password, "timezone": tz})
    assert r.status_code == 201, r.text
    r = http.post("/api/v1/tokens", json={"name": name, "password": password})
    assert r.status_code == 201, r.text
    return {"Authorization": f"Bearer {r.json()['token']}"}


def turn_body(player: str, score: int = 600, **kw) -> dict:
    return {"player": player, "score": score, "idempotency_key": str(uuid.uuid4()), **kw}


def _create_tracker(*args, **kw):
    """The fixtures' tracker: registrations per address unlimited unless told (their tests
    register many players from 127.0.0.1; ``test_tracker_address_limits`` runs the defaults)."""
    from service.tracker import create_app

    kw.setdefault("registrations_per_address", 0)
    return create_app(*args, **kw)


@pytest.fixture
def join():
    """``join(http, name, tz="UTC") -> auth headers``: register over HTTP, then log in."""
    return join_player


@pytest.fixture
def turn():
    """``turn(player, score=600, **fields) -> body`` for ``POST /api/v1/turns``, fresh key."""
    return turn_body


_chromium = SharedChromium()


@pytest.fixture
def chromium() -> Iterator[object]:
    """Debian's chromium under Playwright (the test is skipped, saying why, without it). The
    browser is shared with the tests before and after that ask for it too; every context and
    page a test opened is closed after it, so each starts from fresh contexts (cookies,
    storage, permissions)."""
    browser = _chromium.get()
    yield browser
    for context in browser.contexts:
        context.close()


@pytest.fixture(autouse=True)
def _own_playwright(request) -> None:
    """A test without ``chromium`` may start Playwright itself (a chromium fed a fake camera):
    the shared one is closed first, as Playwright's sync API runs one at a time per thread."""
    if "chromium" not in request.fixturenames:
        _chromium.close()


@pytest.fixture(scope="session", autouse=True)
def _close_shared_chromium() -> Iterator[None]:
    yield
    _chromium.close()
